"""allennlp subcommands added by spanbert_lib (registered with ``Subcommand.register``)."""
