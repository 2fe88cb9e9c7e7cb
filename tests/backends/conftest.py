import pytest


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A tiny Llama checkpoint built and saved locally (tokenizer trained by `tokenizers`)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.backends.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "llama", arch="llama")


@pytest.fixture(scope="session")
def tiny_qwen(tmp_path_factory):
    """A tiny Qwen2 checkpoint with the same kind of tokenizer."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.backends.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "qwen2", arch="qwen2", seed=1)
