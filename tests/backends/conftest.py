import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from tests.backends.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "llama", arch="llama")


@pytest.fixture(scope="session")
def tiny_qwen(tmp_path_factory):
    from tests.backends.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "qwen2", arch="qwen2", seed=1)
