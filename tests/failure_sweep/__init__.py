"""
The failure sweep: the failure paths a user hits, as test cases. Every command of ``allennlp`` this library
touches and the server, given bad paths, its own input as output (also through links), empty / truncated / corrupt
files, invalid UTF-8 and JSON, the wrong kind of archive, archives whose config would run code, bad options,
inputs over the documented limits and hostile HTTP requests. Each case is graded (:mod:`.grading`):

* **good**: the command refused with one ``error:`` line naming the file (or the option), a non-zero exit
  status, and nothing changed (cases that should succeed: exit 0, nothing lost);
* **ok**: a correct refusal, but the message is vaguer (no file named, several lines);
* **bad**: data lost or changed, a partial file left behind, a traceback at the user, exit status 0 on a
  failure, or stuck (no answer within the case's time limit).

A case passes when it is graded good. The cases live in :mod:`.cases`, one module per command group; they run in a
forked copy of the test process (:mod:`.running`), against tiny archives trained once per test run
(:mod:`.archives`). ``python -m evidence.failure_sweep`` runs them and writes the tables.
"""
