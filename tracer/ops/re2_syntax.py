r"""RE2's regular expressions (TensorFlow's regex ops) as Python's `re` patterns.

TensorFlow's regex ops use RE2 on UTF-8 text. tracer runs Python's `re` on the decoded text
(an invalid byte becomes a lone surrogate, which no RE2 construct matches, as no RE2 class
matches an invalid byte) after translating RE2's syntax where the two differ: `$` is the
end of the text unless (?m); \d \w \s \b are ASCII; [[:alpha:]], \pL, \p{Lu}, \z, \Q..\E,
\x{..}, (?U), and `{` that starts no repetition is a literal. What RE2 refuses
(lookaround, backreferences, possessive and atomic groups, \Z) raises as TensorFlow does.
"""

import functools
import re
import unicodedata

from tracer import errors

_MAX_CHAR = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)  # invalid bytes of the text, decoded with surrogateescape
_WORD = ((48, 57), (65, 90), (95, 95), (97, 122))
_PERL = {
    "d": ((48, 57),),
    "w": _WORD,
    "s": ((9, 10), (12, 13), (32, 32)),  # RE2's \s: no \v
}
_POSIX = {
    "alnum": ((48, 57), (65, 90), (97, 122)),
    "alpha": ((65, 90), (97, 122)),
    "ascii": ((0, 127),),
    "blank": ((9, 9), (32, 32)),
    "cntrl": ((0, 31), (127, 127)),
    "digit": ((48, 57),),
    "graph": ((33, 126),),
    "lower": ((97, 122),),
    "print": ((32, 126),),
    "punct": ((33, 47), (58, 64), (91, 96), (123, 126)),
    "space": ((9, 13), (32, 32)),
    "upper": ((65, 90),),
    "word": _WORD,
    "xdigit": ((48, 57), (65, 70), (97, 102)),
}
_SIMPLE_ESCAPES = {"a": 7, "f": 12, "t": 9, "n": 10, "r": 13, "v": 11}
_WORD_CLASS = "[0-9A-Za-z_]"
_BOUNDARY = {
    "b": f"(?:(?<={_WORD_CLASS})(?!{_WORD_CLASS})|(?<!{_WORD_CLASS})(?={_WORD_CLASS}))",
    "B": f"(?:(?<={_WORD_CLASS})(?={_WORD_CLASS})|(?<!{_WORD_CLASS})(?!{_WORD_CLASS}))",
}
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")


def regex_error(message):
    return errors.mixed(errors.InvalidArgumentError, ValueError)(message)


@functools.cache
def _unicode_categories():
    """General category (one and two letters) -> its code points' ranges, from Python's
    unicodedata (RE2's tables may be of another Unicode version)."""
    points = {}
    for point in range(_MAX_CHAR + 1):
        category = unicodedata.category(chr(point))
        for name in (category, category[0]):
            ranges = points.setdefault(name, [])
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1][1] = point
            else:
                ranges.append([point, point])
    points["Any"] = [[0, _MAX_CHAR]]
    return {name: tuple(map(tuple, ranges)) for name, ranges in points.items()}


def _complement(ranges):
    out, start = [], 0
    for lo, hi in sorted(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= _MAX_CHAR:
        out.append((start, _MAX_CHAR))
    return tuple(out)


def _python_class(ranges, negate=False):
    """A Python class of the code points in `ranges` (the others with `negate`), never of an
    invalid byte."""
    ranges = _complement(ranges) if negate else ranges
    ranges = _complement((*_complement(ranges), _SURROGATES))
    if not ranges:
        return "(?!)"
    body = "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in ranges
    )
    return f"[{body}]"


class _Re2ToPython:
    """One RE2 pattern read left to right into Python's syntax (`python`) and its number of
    groups (`groups`)."""

    def __init__(self, pattern):
        self.text, self.at, self.out, self.groups = pattern, 0, [], 0
        # per open group: [flags, the scoped (?i:...) groups opened in it]
        self.levels = [[frozenset(), 0]]
        while self.at < len(self.text):
            self._next()
        if len(self.levels) > 1:
            raise regex_error(f"missing ): {pattern}")
        self.out.append(")" * self.levels[0][1])
        self.python = "".join(self.out)

    def _peek(self, count=1):
        return self.text[self.at : self.at + count]

    def _take(self):
        char = self.text[self.at]
        self.at += 1
        return char

    @property
    def _flags(self):
        return self.levels[-1][0]

    def _next(self):
        char = self._take()
        if char == "\\":
            self.out.append(self._escape())
        elif char == "[":
            self.out.append(_python_class(*self._class()))
        elif char == ".":
            self.out.append(_python_class(() if "s" in self._flags else ((10, 10),), True))
        elif char == "^":
            self.out.append("(?m:^)" if "m" in self._flags else "^")
        elif char == "$":
            self.out.append("(?m:$)" if "m" in self._flags else r"\Z")
        elif char == "(":
            self._open()
        elif char == ")":
            if len(self.levels) == 1:
                raise regex_error(f"unexpected ): {self.text}")
            self.out.append(")" * (self.levels.pop()[1] + 1))
        elif char == "|":
            level = self.levels[-1]
            reopen = ("(?i:" if "i" in level[0] else "(?-i:") if level[1] else ""
            self.out.append(")" * level[1] + "|" + reopen)
            level[1] = min(level[1], 1)
        elif char in "*+?":
            self._repeat(char)
        elif char == "{" and _REPEAT.match(self.text, self.at - 1):
            match = _REPEAT.match(self.text, self.at - 1)
            low, comma, high = match.groups()
            if int(low) > 1000 or (high and int(high) > 1000) or (high and int(high) < int(low)):
                raise regex_error(f"bad repetition operator: {match.group()}")
            self.at = match.end()
            self._repeat(match.group())
        else:
            self.out.append(re.escape(char))

    def _repeat(self, operator):
        lazy = self._peek() == "?"
        self.at += lazy
        if self._peek() and (self._peek() in "*+?" or _REPEAT.match(self.text, self.at)):
            raise regex_error(f"bad repetition operator: {self.text}")
        if "U" in self._flags:
            lazy = not lazy
        self.out.append(operator + ("?" if lazy else ""))

    def _open(self):
        flags = self._flags
        if self._peek() != "?":
            self.groups += 1
            self.levels.append([flags, 0])
            self.out.append("(")
            return
        self.at += 1
        if self._peek(2) == "P<":
            end = self.text.find(">", self.at)
            name = self.text[self.at + 2 : end]
            if end < 0 or not name.isidentifier():
                raise regex_error(f"invalid named capture group: {self.text}")
            self.at = end + 1
            self.groups += 1
            self.levels.append([flags, 0])
            self.out.append(f"(?P<{name}>")
            return
        match = re.compile(r"([imsU]*)(?:-([imsU]+))?([:)])").match(self.text, self.at)
        if match is None or not (match.group(1) or match.group(2) or match.group(3) == ":"):
            raise regex_error(f"invalid perl operator: (?{self._peek(2)}")
        self.at = match.end()
        changed = (flags | set(match.group(1))) - set(match.group(2) or "")
        if match.group(3) == ":":
            self.levels.append([changed, 0])
            self.out.append("(?:")
            if ("i" in changed) != ("i" in flags):
                self.out.append("(?i:" if "i" in changed else "(?-i:")
                self.levels[-1][1] = 1
            return
        level = self.levels[-1]
        if ("i" in changed) != ("i" in flags):
            self.out.append("(?i:" if "i" in changed else "(?-i:")
            level[1] += 1
        level[0] = frozenset(changed)

    def _escape(self):
        """The Python form of the escape after a backslash, outside a class."""
        if self.at >= len(self.text):
            raise regex_error(f"trailing \\: {self.text}")
        char = self._peek()
        if char in _BOUNDARY:
            self.at += 1
            return _BOUNDARY[char]
        if char in "Az":
            self.at += 1
            return r"\A" if char == "A" else r"\Z"
        if char == "Q":
            end = self.text.find(r"\E", self.at)
            end = len(self.text) if end < 0 else end
            literal, self.at = self.text[self.at + 1 : end], min(end + 2, len(self.text))
            return re.escape(literal)
        if char == "C":  # any byte: here any character
            self.at += 1
            return _python_class((), True)
        ranges, negate = self._class_escape()
        return _python_class(ranges, negate)

    def _class_escape(self):
        """The code points (ranges, negated) an escape stands for, in a class or outside."""
        char = self._take()
        if char.lower() in _PERL:
            return _PERL[char.lower()], char.isupper()
        if char in "pP":
            return self._unicode_class(char == "P")
        if char in _SIMPLE_ESCAPES:
            return ((_SIMPLE_ESCAPES[char],) * 2,), False
        if char == "x":
            match = re.compile(r"\{([0-9A-Fa-f]+)\}|[0-9A-Fa-f]{2}").match(self.text, self.at)
            if match is None or int(match.group(1) or match.group(), 16) > _MAX_CHAR:
                raise regex_error(f"invalid escape sequence: {self.text}")
            self.at = match.end()
            point = int(match.group(1) or match.group(), 16)
            return ((point, point),), False
        if char in "01234567" and (char == "0" or self._peek() in tuple("01234567")):
            match = re.compile("[0-7]{0,2}").match(self.text, self.at)
            self.at = match.end()
            point = int(char + match.group(), 8)
            return ((point, point),), False
        if ord(char) < 128 and not char.isalnum():
            return ((ord(char), ord(char)),), False
        raise regex_error(f"invalid escape sequence: \\{char}")

    def _unicode_class(self, negate):
        if self._peek() == "{":
            end = self.text.find("}", self.at)
            if end < 0:
                raise regex_error(f"invalid character class range: {self.text}")
            name, self.at = self.text[self.at + 1 : end], end + 1
        else:
            name = self._take() if self.at < len(self.text) else ""
        if name.startswith("^"):
            name, negate = name[1:], not negate
        categories = _unicode_categories()
        if name not in categories:
            raise errors.mixed(errors.UnimplementedError, NotImplementedError)(
                f"\\p{{{name}}}: tracer knows Unicode's general categories (L, Lu, N, ...) and "
                "Any, not scripts"
            )
        return categories[name], negate

    def _class(self):
        """The code points of the class after `[` (ranges, negated)."""
        negate = self._peek() == "^"
        self.at += negate
        ranges, first = [], True
        while True:
            if self.at >= len(self.text):
                raise regex_error(f"missing ]: {self.text}")
            if self._peek() == "]" and not first:
                self.at += 1
                return tuple(ranges), negate
            first = False
            posix = re.compile(r"\[:(\^?)([a-z]+):\]").match(self.text, self.at)
            if posix:
                if posix.group(2) not in _POSIX:
                    raise regex_error(f"invalid character class range: {posix.group()}")
                self.at = posix.end()
                items = _POSIX[posix.group(2)]
                ranges.extend(_complement(items) if posix.group(1) else items)
                continue
            low = self._class_char()
            if isinstance(low, tuple):
                ranges.extend(low)
                continue
            if self._peek() == "-" and self._peek(2) != "-]":
                self.at += 1
                high = self._class_char()
                if isinstance(high, tuple) or high < low:
                    raise regex_error(f"invalid character class range: {self.text}")
                ranges.append((low, high))
            else:
                ranges.append((low, low))

    def _class_char(self):
        """One character of a class (its code point), or the ranges of a class escape."""
        char = self._take()
        if char != "\\":
            return ord(char)
        if self.at >= len(self.text):
            raise regex_error(f"missing ]: {self.text}")
        items, negate = self._class_escape()
        if len(items) == 1 and items[0][0] == items[0][1] and not negate:
            return items[0][0]
        return _complement(items) if negate else tuple(items)


@functools.lru_cache(maxsize=256)
def compiled(pattern):
    """`pattern` (RE2's syntax, bytes) as a compiled Python pattern on text."""
    try:
        text = pattern.decode("utf-8")
    except UnicodeDecodeError:
        raise regex_error(f"invalid UTF-8 in pattern {pattern!r}") from None
    translated = _Re2ToPython(text)
    try:
        return re.compile(translated.python)
    except re.error as error:
        raise regex_error(f"Invalid pattern: {text}, error: {error}") from None
