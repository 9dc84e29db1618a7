"""
Packaging for spanbert_lib.

allennlp 2.10.1 cannot be listed as a dependency: its metadata pins torch<1.13 (no
Python 3.11 wheels) and pip fails to resolve. The exact, working set of packages lives in
``requirements.lock`` and is installed with ``--no-deps`` by ``scripts/bootstrap.sh``.
``install_requires`` below only names what spanbert_lib itself imports, loosely.
"""

import os
import sys

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spanbert_lib.compat.__main__ import PTH_LINE, PTH_NAME  # noqa: E402
from spanbert_lib.version import VERSION  # noqa: E402


class BuildPyWithCompatHook(build_py):
    """Ships ``spanbert_lib_compat.pth`` at the top of the wheel, i.e. in site-packages."""

    def run(self):
        super().run()
        if not self.dry_run:
            os.makedirs(self.build_lib, exist_ok=True)
            with open(os.path.join(self.build_lib, PTH_NAME), "w") as pth:
                pth.write(PTH_LINE)

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH_NAME)]


setup(
    name="spanbert_lib",
    version=VERSION,
    description="SpanBERT pre-training and span/entity tasks as an AllenNLP plugin",
    long_description=open("README.md").read() if os.path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    packages=find_packages(include=["spanbert_lib", "spanbert_lib.*"]),
    # the page of `allennlp serve` (HTML/CSS/JS, no network at run time)
    package_data={"spanbert_lib.serving": ["static/*.html", "static/*.css", "static/js/*.js", "static/js/views/*.js"]},
    python_requires=">=3.11",
    install_requires=[
        "torch>=2.1",
        "transformers>=4.40,<5",
        "tokenizers>=0.19",
        "huggingface_hub<1.0",
        "spacy>=3.7",
        "numpy",
        "setuptools<81",
    ],
    # `pip install '.[onnx]'` from a checkout: `allennlp export-onnx` (pinned in requirements.lock for the tests)
    extras_require={"onnx": ["onnx>=1.15", "onnxruntime>=1.17"]},
    # spaCy finds the pipeline components by name: nlp.add_pipe("spanbert_coref") / ("spanbert_span_ner")
    entry_points={
        # `allennlp coref-score` / `allennlp squad-eval` without allennlp's start-up (commands/console_scripts.py)
        "console_scripts": [
            "spanbert-coref-score = spanbert_lib.commands.console_scripts:coref_score",
            "spanbert-squad-eval = spanbert_lib.commands.console_scripts:squad_eval",
        ],
        "spacy_factories": [
            "spanbert_coref = spanbert_lib.spacy_components.coref_component:make_coref_component",
            "spanbert_span_ner = spanbert_lib.spacy_components.span_ner_component:make_span_ner_component",
        ],
    },
    cmdclass={"build_py": BuildPyWithCompatHook},
    license="Apache-2.0",
)
