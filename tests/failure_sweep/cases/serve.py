"""
``allennlp serve`` at start-up: bad ``--model`` specs, archives and options are refused before the port is bound;
bound to every interface (any spelling of the any-address) it warns.
"""

import json

from tests import TINY_BERT_DIR
from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.grading import Case, all_of, says

book = CaseBook()


def without_binding() -> None:
    """In the command's process: uvicorn returns at once instead of serving (the start-up path runs whole)."""
    import uvicorn

    uvicorn.run = lambda *args, **kwargs: None


@book.case("serve_model_path_missing")
def _(d):
    return Case(["serve", "--model", f"qa={d / 'typo_run'}"], names=("typo_run",), child_setup=without_binding)


@book.case("serve_model_truncated_archive")
def _(d):
    truncated = d.damaged.truncated
    return Case(
        ["serve", "--model", f"qa={truncated}"],
        names=(str(truncated),),
        watch=(d.damaged.folder,),
        child_setup=without_binding,
    )


@book.case("serve_model_spec_malformed")
def _(d):
    return Case(["serve", "--model", "a b=model.tar.gz"], names=("--model",), child_setup=without_binding)


@book.case("serve_masker_bad_json")
def _(d):
    return Case(["serve", "--masker", "{bad"], names=("--masker",), child_setup=without_binding)


@book.case("serve_overrides_setting_the_model_does_not_take")
def _(d):
    typo = json.dumps({"model.pair_product_dtpye": "bfloat16"})
    return Case(
        ["serve", "--model", f"coref={d.archives.coref}", "-o", f"coref={typo}"],
        names=("--overrides coref",),
        child_setup=without_binding,
    )


@book.case("serve_overrides_not_json")
def _(d):
    return Case(
        ["serve", "--model", f"coref={d.archives.coref}", "-o", "coref={bad"],
        names=("--overrides coref",),
        child_setup=without_binding,
    )


for option, value in (("--port", "70000"), ("--max-request-chars", "0"), ("--max-concurrent-predictions", "x")):

    def bad_option(d, option=option, value=value):
        return Case(["serve", option, value], names=(option,), child_setup=without_binding)

    book.add(f"serve{option.replace('-', '_')}_{value}", bad_option)

ANY_ADDRESS = {"0": "0", "0.0": "0.0", "ipv6_any": "::", "0x0": "0x0"}
for label, host in ANY_ADDRESS.items():

    def every_interface(d, host=host):
        return Case(
            ["serve", "--host", host, "--port", "8000", "--masking-tokenizer", str(TINY_BERT_DIR)],
            expect="succeed",
            check=all_of(
                says(f"warning: --host {host} serves every network interface"), says("http://127.0.0.1:8000/")
            ),
            child_setup=without_binding,
        )

    book.add(f"serve_host_{label}_warns_of_every_interface", every_interface)
