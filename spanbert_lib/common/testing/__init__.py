"""Helpers for tests: external data location, tiny local transformer models."""

from spanbert_lib.common.testing.external_data import (  # noqa: F401
    EXTERNAL_DATA_ENV,
    external_data_dir,
    require_external_data,
)
