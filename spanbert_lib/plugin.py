"""
Importing this module registers every component of spanbert_lib with allennlp.

allennlp imports the modules named in a ``.allennlp_plugins`` file with a plain
``import``; ``spanbert_lib`` itself is kept light (see its docstring), so that file names
this module instead. ``--include-package spanbert_lib`` imports all submodules by itself.
"""

from allennlp.common.util import import_module_and_submodules

import_module_and_submodules("spanbert_lib", exclude={"spanbert_lib.plugin"})
