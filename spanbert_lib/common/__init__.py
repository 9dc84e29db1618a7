"""Building blocks shared by the tasks of spanbert_lib."""
