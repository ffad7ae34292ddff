"""Text for people: plurals, one-line messages and clipped labels."""

# Every character str.splitlines() breaks at, written as an escape.
LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
# Text drawn or printed from a file (a row, host or GPU name) is cut to this many characters.
LABEL_WIDTH = 100


def plural(count, word, many=None):
    """'1 row', '2 rows'; many: the plural where it is not word + 's' ('families')."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def one_line(text):
    """text with its line breaks escaped: a message is one line on stderr, whatever file names
    and row names it quotes."""
    return str(text).translate(LINE_BREAKS)


def clip(text, width=LABEL_WIDTH):
    """text, cut to width characters with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "\u2026"
