"""Generated source that prints as text and displays highlighted.

:class:`SourceCode` is a ``str`` (callers that slice, search or write it keep
working) that knows its language; Jupyter shows it whole, with line numbers,
highlighted by Pygments.  OpenCL C is highlighted by a small extension of
Pygments' C lexer (its address-space qualifiers and work-item functions),
CUDA C by Pygments' own CUDA lexer.
"""

from __future__ import annotations

import html as _html

from ._svg import FONT

#: languages :class:`SourceCode` knows, and what they are called in titles
LANGUAGES = {"opencl": "OpenCL C", "cuda": "CUDA C", "c": "C", "python": "Python",
             "text": "text"}

_OPENCL_KEYWORDS = frozenset(
    "__kernel kernel __global global __local local __constant constant __private "
    "private __read_only __write_only read_only write_only restrict".split())
_OPENCL_BUILTINS = frozenset(
    "get_global_id get_local_id get_group_id get_global_size get_local_size "
    "get_num_groups get_work_dim barrier mem_fence atomic_cmpxchg atomic_add "
    "atomic_xchg atom_cmpxchg vload vstore".split())


def _missing(what: str) -> ImportError:
    return ImportError(f"ckernels: {what} needs Pygments, an optional dependency: "
                       "pip install 'ckernels[display]' (or pip install pygments)")


def _lexer(language: str):
    try:
        from pygments.lexers import CLexer, CudaLexer, PythonLexer, TextLexer
        from pygments.token import Keyword, Name
    except ImportError:
        raise _missing("highlighting source") from None
    if language == "cuda":
        return CudaLexer()
    if language == "python":
        return PythonLexer()
    if language == "text":
        return TextLexer()
    if language == "c":
        return CLexer()

    class _OpenCLLexer(CLexer):
        """C with OpenCL's qualifiers and work-item functions."""

        def get_tokens_unprocessed(self, text, stack=("root",)):
            for index, token, value in CLexer.get_tokens_unprocessed(self, text, stack):
                if token is Name and value in _OPENCL_KEYWORDS:
                    token = Keyword.Type if value.endswith(("global", "local", "constant",
                                                            "private")) else Keyword
                elif token is Name and value in _OPENCL_BUILTINS:
                    token = Name.Builtin
                yield index, token, value
    return _OpenCLLexer()


def highlight(text: str, language: str = "opencl", title: str | None = None) -> str:
    """``text`` as highlighted HTML (inline styles, so it renders anywhere:
    Jupyter, nbconvert's HTML, a browser), every line, with line numbers.
    Without Pygments (an optional dependency) the text is shown unhighlighted."""
    if language not in LANGUAGES:
        raise ValueError(f"highlight: unknown language {language!r} "
                         f"({', '.join(LANGUAGES)})")
    # long lines wrap at spaces (never inside a name), so nothing is hidden
    pre = ("margin:0; line-height:125%; font-size:12px; white-space:pre-wrap; "
           "word-break:normal; overflow-wrap:break-word; "
           f"font-family:{FONT}")
    try:
        from pygments import highlight as _pyg
        from pygments.formatters import HtmlFormatter
    except ImportError:
        body = f"<pre style='{pre}'>{_html.escape(text)}</pre>"
    else:
        fmt = HtmlFormatter(noclasses=True, linenos="inline", style="default",
                            nobackground=True, prestyles=pre)
        body = _pyg(text, _lexer(language), fmt)
    head = ""
    if title is not None:
        head = (f"<div style='font-family:sans-serif;font-size:12px;color:#555;"
                f"margin-bottom:2px'>{_html.escape(title)}</div>")
    return (f"<div class='ckernels-source' style='border:1px solid #ddd;border-radius:3px;"
            f"padding:4px 6px;background:#fafafa;overflow-x:auto'>{head}{body}</div>")


class SourceCode(str):
    """Source text in ``language`` (``"opencl"``, ``"cuda"``, ...): a ``str`` that
    Jupyter displays highlighted and complete; ``print`` prints it as is."""

    language: str
    title: str | None

    def __new__(cls, text: str, language: str = "opencl", title: str | None = None):
        if language not in LANGUAGES:
            raise ValueError(f"SourceCode: unknown language {language!r} "
                             f"({', '.join(LANGUAGES)})")
        self = super().__new__(cls, text)
        self.language = language
        self.title = title
        return self

    @property
    def line_count(self) -> int:
        return self.count("\n") + (0 if self.endswith("\n") or not self else 1)

    def _repr_html_(self) -> str:
        title = self.title or f"{LANGUAGES[self.language]}, {self.line_count} lines"
        return highlight(str(self), self.language, title)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))   # IPython's plain text: the source itself, not a quoted repr

    def __reduce__(self):
        return (SourceCode, (str(self), self.language, self.title))


__all__ = ["SourceCode", "highlight", "LANGUAGES"]
