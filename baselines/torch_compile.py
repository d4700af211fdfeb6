"""torch.compile for the baselines' `compile` forms, or a RuntimeError that says why it cannot run here.

torch.compile came with torch 2.0; its default backend (Inductor) generates C++ on a CPU and needs a
C++ compiler; TorchDynamo does not run on every Python version. The form is skipped with the reason.
"""
import os
import shutil


def torch_compile(torch, fn, **kwargs):
    """torch.compile(fn, **kwargs), or RuntimeError where it cannot work (compilation itself is lazy:
    it happens in the form's first call)."""
    if not hasattr(torch, "compile"):
        raise RuntimeError(f"torch {torch.__version__} has no torch.compile (it came with torch 2.0)")
    import torch._dynamo
    if hasattr(torch._dynamo, "is_dynamo_supported") and not torch._dynamo.is_dynamo_supported():
        import platform
        raise RuntimeError(f"torch {torch.__version__}: torch.compile is not supported on Python "
                           f"{platform.python_version()}")
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not cxx or not shutil.which(cxx.split()[0]):
        raise RuntimeError("torch.compile on a CPU needs a C++ compiler (Inductor builds C++): none found "
                           "(no $CXX, g++, c++ or clang++ on PATH)")
    return torch.compile(fn, **kwargs)
