"""
Compatibility layer that lets allennlp 2.10.1 / allennlp-models 2.10.1 run on
Python 3.11 + PyTorch 2.x + transformers 4.57.

allennlp was archived in 2022 and pins torch<1.13 and transformers<4.21. We install it
with ``--no-deps`` next to a modern stack (``requirements.lock``) and repair the few
places where it touches APIs that have since changed. Every repair is a small function
in :mod:`spanbert_lib.compat.shims` whose docstring names the upstream change it answers.

The repairs must be in effect *before* allennlp's own modules run (the ``allennlp``
command imports allennlp-models' plugin long before ``--include-package`` is read).
So :func:`install` puts an import hook on ``sys.meta_path`` that applies each shim
exactly when the module it concerns is imported. It is called from the file
``spanbert_lib_compat.pth`` in site-packages, which costs nothing at interpreter start
beyond importing this small module; nothing heavy is imported until allennlp is.

``python -m spanbert_lib.compat install`` writes that ``.pth`` file (the bootstrap
script does this; a wheel install ships it). ``python -m spanbert_lib.compat status``
reports whether the hook is active.
"""

from spanbert_lib.compat.hook import install, install_safeguards, is_installed, safeguards_installed  # noqa: F401
