"""
What this library guarantees to users of every ``allennlp`` command, on top of allennlp's own behaviour.

* **One-line errors** (:mod:`~spanbert_lib.safeguards.user_errors`): a problem the user can fix (bad data,
  configuration or archive) is printed as ``error: FILE:LINE: what is wrong`` with exit status 1, not a
  traceback; ``SPANBERT_LIB_DEBUG=1`` shows the traceback.
* **Nothing silently accepted** (:mod:`~spanbert_lib.safeguards.empty_input`,
  :mod:`~spanbert_lib.safeguards.unknown_labels`, :mod:`~spanbert_lib.safeguards.predict_input`): empty
  input, labels the model does not know and malformed prediction input are refused with the file and record.
* **Archives and checkpoints a user can trust** (:mod:`~spanbert_lib.safeguards.safe_archives`,
  :mod:`~spanbert_lib.safeguards.safe_torch_io`, :mod:`~spanbert_lib.safeguards.atomic_checkpoints`):
  archive members that would land outside the extraction directory are refused, every ``torch.load`` is
  weights-only, saves are atomic and ``--recover`` starts from the newest checkpoint that loads.
* **Nothing lost** (:mod:`~spanbert_lib.safeguards.same_file`, :mod:`~spanbert_lib.safeguards.atomic_files`,
  :mod:`~spanbert_lib.safeguards.command_outputs`, :mod:`~spanbert_lib.safeguards.finished_runs`): no command
  writes over one of its inputs (also through links), output files appear whole or not at all, ``--recover``
  on a finished run changes nothing, and a run that fails before saving anything leaves no directory.
* **Options and paths checked first** (:mod:`~spanbert_lib.safeguards.option_checks`,
  :mod:`~spanbert_lib.safeguards.config_files`, :mod:`~spanbert_lib.safeguards.model_paths`): bad numeric
  options, a directory given as a config file, a Hugging Face model path that does not load.
* **Exact resume** (:mod:`~spanbert_lib.safeguards.exact_resume`,
  :mod:`~spanbert_lib.safeguards.random_states`, :mod:`~spanbert_lib.safeguards.epoch_loss_ledger`,
  :mod:`~spanbert_lib.safeguards.trainer_callbacks`): a run killed and resumed with ``--recover`` ends with
  the same weights and metrics as one never interrupted (single process).

:data:`spanbert_lib.safeguards.hooks.SAFEGUARDS` says where each attaches to allennlp; the import hook of
:mod:`spanbert_lib.compat` installs them together with the repairs of allennlp itself.
"""
