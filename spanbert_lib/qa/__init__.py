"""Extractive question answering (SQuAD 1.1/2.0, MRQA)."""
