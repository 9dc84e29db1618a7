"""
Runs the ``allennlp`` command and kills its own process with SIGKILL at a chosen moment, to test
recovery from crashes (a test helper, not part of the library).

    python tests/safeguards/training_killer.py --kill-at-training-batch 13 -- train CONFIG -s DIR
    python tests/safeguards/training_killer.py --kill-before-rename training_state_e1_b20.th -- train ... --recover

``--kill-at-training-batch N``: as the N-th training batch of this process starts (1-based).
``--kill-before-rename NAME``: once a checkpoint file has been fully written to its temporary
name and fsynced, just before it is renamed to ``NAME``.
"""

import argparse
import os
import signal
import sys


def kill_self() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def kill_at_training_batch(number: int) -> None:
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer

    original = GradientDescentTrainer.batch_outputs
    started = {"count": 0}

    def batch_outputs(self, batch, for_training):
        if for_training:
            started["count"] += 1
            if started["count"] == number:
                kill_self()
        return original(self, batch, for_training)

    GradientDescentTrainer.batch_outputs = batch_outputs


def kill_before_rename(name: str) -> None:
    original = os.replace

    def replace(source, destination, *args, **kwargs):
        if os.path.basename(os.fspath(destination)) == name:
            kill_self()
        return original(source, destination, *args, **kwargs)

    os.replace = replace


def main() -> None:
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--kill-at-training-batch", type=int)
    group.add_argument("--kill-before-rename")
    parser.add_argument("allennlp_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.kill_at_training_batch is not None:
        kill_at_training_batch(args.kill_at_training_batch)
    else:
        kill_before_rename(args.kill_before_rename)
    allennlp_args = args.allennlp_args[1:] if args.allennlp_args[:1] == ["--"] else args.allennlp_args
    sys.argv = ["allennlp", *allennlp_args]
    from allennlp.commands import main as allennlp_main

    allennlp_main(prog="allennlp")


if __name__ == "__main__":
    main()
