"""The web UI's assets (CSS, icon), installed as `audiopub.static`.

A regular package rather than a bare folder: setuptools' editable install cannot import a
namespace package that `package-dir` maps outside its parent (pypa/setuptools#4943).
"""
