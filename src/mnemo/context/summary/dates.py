"""Session dates and relative dates (C18): "last Friday" in a session of 8 May 2023.

A conversation says when it happens in a few ways: a header line such as
``[Session 3, 1:14 pm on 25 May, 2023]``, or a date written out in a message
(``25 May 2023``, ``May 25, 2023``, ``2023-05-25``). ``find_date`` finds the first one in
a text; the reader keeps the latest one seen as the date of the turns that follow.

A chat has no header lines: its date is the one its system prompt states
(``conversation_started``: mnemo's prompt ends with "Conversation started: 2026-12-01"),
and a header line in the turns still wins from where it stands.

``resolve_relative`` rewrites the relative expressions of a sentence with the date they
stand for in brackets after them — ``yesterday [7 May 2023]``, ``last week [week of
1 May 2023]``, ``two months ago [March 2023]``, ``last year [2022]``, ``last Fri
[5 May 2023]``, ``two weekends ago [weekend of 22 Apr 2023]``, ``in three weeks [week of
29 May 2023]`` — so the summary keeps a
date a reader can use after the session's own date has been compacted away. A weekday
with "on" is the one before the session when the sentence tells of the past ("we went
there on Friday"), the one after it otherwise; "this Friday" is the one of the session's
week, or the coming one when that has passed and the sentence does not tell of the past.

Chinese says the same in its own words, resolved the same way: ``昨天 [7 May 2023]``,
``上周五 [5 May 2023]`` (the Friday of the week before the session's: a Chinese week is
named, not counted back from today), ``下个月 [Jun 2023]``, ``三天前 [5 May 2023]``,
``去年 [2022]``; ``2023年5月8日`` is a full date. A weekday named without a week ("周五")
is left alone: "每周五" is every Friday.

Spanish, French, German, Italian, Portuguese and Dutch too: ``ayer [7 May 2023]``,
``la semaine prochaine [week of 15 May 2023]``, ``letzten Freitag [5 May 2023]``,
``tre giorni fa [5 May 2023]``, ``vorig jaar [2022]`` — the days before and after, a last,
this or next week, weekend, month, year or weekday, and a count of them ago or ahead.
Their words that are also words for something else are read only where they are
dates: "esta mañana" is this morning, "guten Morgen" good morning, and "hier" is
yesterday only beside French words (in German and Dutch it is here).
Every pattern is bounded, so a pass is linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import date, timedelta

from mnemo.messages import Message, content_text

__all__ = ["CALENDAR_WORDS", "OTHER_CALENDAR_WORDS", "OTHER_WEEKDAYS", "RESOLVED_DATE",
           "alternation", "conversation_started", "day_ahead", "find_date", "format_date",
           "header_date", "middle_date", "resolve_relative"]

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = {name: i + 1 for i, name in enumerate(_MONTHS)} | {
    name[:3]: i + 1 for i, name in enumerate(_MONTHS)} | {"sept": 9}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# The names of the days and months, lower-cased: values, not names (``salience``).
CALENDAR_WORDS = frozenset(_MONTHS + _WEEKDAYS)
WEEKDAYS = frozenset(_WEEKDAYS)
# Short weekday names as people write them ("last Fri", "on Tues"). Read only when
# capitalised: "I last sat down" is no Saturday.
_SHORT_WEEKDAYS = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3,
                   "thurs": 3, "fri": 4, "sat": 5, "sun": 6}
_WEEKDAY_WORD = "|".join(_WEEKDAYS + tuple(sorted(_SHORT_WEEKDAYS, key=len, reverse=True)))
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
            "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3}
_MONTH_WORD = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?" \
              r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? {_MONTH_WORD},? (\d{{4}})\b",
                             re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH_WORD} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b",
                             re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?!\d)")
_CJK_YMD = re.compile(r"(?<!\d)(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_COUNT = (r"an?|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|a couple of"
          r"|a couple|couple of|couple|\d{1,2}")
# Holidays with a day of their own: (month, day), or how to find it in a year.
# Written without apostrophes, as ``_holiday`` looks them up.
_FIXED_HOLIDAYS = {"christmas eve": (12, 24), "christmas": (12, 25), "christmas day": (12, 25),
                   "new years eve": (12, 31), "new years": (1, 1), "new years day": (1, 1),
                   "halloween": (10, 31), "valentines": (2, 14), "valentines day": (2, 14),
                   "the fourth of july": (7, 4), "independence day": (7, 4)}
_HOLIDAY_WORD = (r"christmas(?: eve| day)?|new year(?:['’]?s)?(?: eve| day)?|halloween"
                 r"|valentine(?:['’]?s)?(?: day)?|thanksgiving|easter|the fourth of july"
                 r"|independence day")
# Longer alternatives first: at one place the first that matches wins ("the day before
# yesterday" over "yesterday", "this past" over "this", "a couple of" over "a").
_RELATIVE = re.compile(
    r"\b(?:(the day before yesterday|the day after tomorrow|yesterday|earlier today|today"
    r"|tonight|tomorrow|last night|this morning|this afternoon|this evening"
    r"|over the weekend|(?:earlier|later) this (?:week|month)|the week(?:end)? before last"
    r"|a fortnight ago)"
    r"|(this past|last|this|next|past) (weekend|week|month|year|summer|winter|spring|fall"
    r"|autumn)"
    rf"|(this past|last|this|next|on|to|until|till|by|from) ({_WEEKDAY_WORD})"
    rf"|({_COUNT}) (days?|weekends?|weeks?|months?|years?) (ago|from now)"
    rf"|in ({_COUNT}) (days?|weekends?|weeks?|months?|years?)"
    rf"|(this past|last|this|next) ({_HOLIDAY_WORD}))\b",
    re.IGNORECASE,
)
# "On Friday" is the one before the session in a sentence told in the past ("we went
# there on Friday"), the one after it otherwise ("see you on Friday").
_PAST = re.compile(r"\b(?:was|were|had|did|went|got|saw|took|made|came|met|felt|told|said"
                   r"|found|gave|ran|bought|left|won|lost|spent|began|read|swam|ate|drove"
                   r"|wrote|sang|flew|rode|threw|drew|drank|wore|broke|chose|fell|forgot"
                   r"|sat|slept|kept|brought|thought|taught|caught|sold|heard|held|built"
                   r"|sent|paid|knew|grew|became|stood|woke|spoke|led|fought|agreed|freed"
                   r"|(?!hundred\b)\w{2,}(?<![eE])ed)\b",
                   re.IGNORECASE)
_FUTURE = re.compile(r"\b(?:will|going to|gonna|plan(?:s|ning)? to|hope to|can't wait)\b"
                     r"|'ll\b", re.IGNORECASE)


# A participle after "is" or "are" tells of what stands now, however it ends: "The
# interview is scheduled on Tuesday" is the coming Tuesday (by hand the model's restating
# of the user's "The interview is on Tuesday" was dated the Tuesday before), and so are
# "I'm so excited about Friday" and "we're getting married on Saturday". ("I need to
# bring …" has no past either, nor "a hundred chairs": by hand the first was dated so.)
_PRESENT_STATE = re.compile(
    r"\b(?:is|are|am|'s|'re|'m|has been|have been|getting|get|be|being)\s+(?:(?:so|really"
    r"|very|all|now|also|still|already|finally|just|\w+ly)\s+)?\w{2,}ed\b", re.IGNORECASE)


def _told_in_past(sentence: str) -> bool:
    """The sentence tells of the past: a verb in the past, none of the future."""
    if _PAST.search(sentence) is None or _FUTURE.search(sentence):
        return False
    return "ed" not in sentence or bool(_PAST.search(_PRESENT_STATE.sub(" ", sentence)))


def _past_at(match: re.Match[str], sentence: str) -> bool:
    """Whether the date ``match`` found in ``sentence`` is told of the past: by the
    clause it stands in when that has a subject of its own, else by the sentence. By
    hand "Actually we booked three nights now, not two, so we leave on Monday." was
    dated the Monday before: "booked" told the whole sentence in the past. (A clause of
    a list, "… to Rome, Milan and Venice on Friday.", goes with its sentence.)"""
    starts = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, match.start())]
    end = _CLAUSE_BREAK.search(sentence, match.end())
    clause = sentence[starts[-1] if starts else 0:end.start() if end else len(sentence)]
    return _told_in_past(clause if _SUBJECT.search(clause) else sentence)


_CLAUSE_BREAK = re.compile(r"[,;:]|\b(?:so|and|but|because|while|when|then)\b",
                           re.IGNORECASE)
_SUBJECT = re.compile(r"\b(?:I|we|you|he|she|they|it)\b", re.IGNORECASE)


# The line mnemo's system prompt ends with (``prompt/guidance.date_line``): the date of
# the session when no header line in the turns gives one.
_STARTED = re.compile(r"^Conversation started: (\d{4})-(\d{2})-(\d{2})\b", re.MULTILINE)


def conversation_started(system_text: str) -> date | None:
    """The date a system prompt says the conversation started ("Conversation started:
    2026-12-01 (Tuesday)"), if it says so."""
    match = _STARTED.search(system_text)
    return _to_date(match.groups(), "iso") if match else None


# A transcript's session header: "[Session 3, 1:14 pm on 25 May, 2023]" alone on its line.
HEADER_LINE = re.compile(r"^\[[^\]\n]{4,120}\]$", re.MULTILINE)


def middle_date(messages: Sequence[Message], first: int, head_end: int) -> date | None:
    """What a compaction dates its middle by, until a header line there says another:
    the last header line of the kept head (``messages[first:head_end]``: a transcript of
    sessions), else the date the system prompt (``messages[:first]``) says the
    conversation started (a chat's turns carry no dates)."""
    return header_date("\n".join(content_text(m) for m in messages[first:head_end])) or (
        conversation_started("\n".join(content_text(m) for m in messages[:first])))


def header_date(text: str) -> date | None:
    """The date the last header line of ``text`` names ("[Session 3, 1:14 pm on 25 May,
    2023]" alone on its line), if any."""
    found = None
    for match in HEADER_LINE.finditer(text):
        found = find_date(match.group()) or found
    return found


def format_date(day: date) -> str:
    """``8 May 2023``, ``19 Dec 2022``: short, and read the same in every locale."""
    return f"{day.day} {_MONTHS[day.month - 1][:3].capitalize()} {day.year}"


def _year(year: int) -> str:
    if not 1 <= year <= 9999:  # as ``date`` does: the caller leaves the words unresolved
        raise ValueError(f"year {year} is out of range")
    return str(year)


def _month_year(day: date) -> str:
    return f"{_MONTHS[day.month - 1][:3].capitalize()} {day.year}"


def find_date(text: str) -> date | None:
    """The first full date written in ``text`` (day, month and year), if any."""
    best: tuple[int, date] | None = None
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO, "iso"),
                           (_CJK_YMD, "iso")):
        match = pattern.search(text)
        if match is None or (best is not None and best[0] <= match.start()):
            continue
        found = _to_date(match.groups(), order)
        if found is not None:
            best = (match.start(), found)
    return best[1] if best else None


def _to_date(groups: tuple[str | None, ...], order: str) -> date | None:
    parts = [g or "" for g in groups]
    try:
        if order == "dmy":
            return date(int(parts[2]), _month(parts[1]), int(parts[0]))
        if order == "mdy":
            return date(int(parts[2]), _month(parts[0]), int(parts[1]))
        return date(int(parts[0]), int(parts[1]), int(parts[2]))
    except (ValueError, KeyError):
        return None


def _month(word: str) -> int:
    word = word.lower()
    return _MONTH.get(word) or _MONTH[word[:3]]


def _weekday(today: date, target: int, which: str, past: bool) -> date:
    delta = (today.weekday() - target) % 7
    if which in ("last", "this past") or (which == "on" and past):
        return today - timedelta(days=delta or 7)
    if which == "next" or which == "on":
        return today + timedelta(days=((target - today.weekday()) % 7) or 7)
    # "this Friday": the one of this week, before or after today — unless that one has
    # passed and the sentence does not tell of the past: "my band plays this Friday",
    # said on a Sunday, is the coming one.
    ahead = target - today.weekday()
    return today + timedelta(days=ahead if ahead >= 0 or past else ahead + 7)


# Words before a weekday that make it a date only with its day of the month after it.
_TO_A_DAY = frozenset(("to", "until", "till", "by", "from"))
# The day of the month after a weekday ("on Saturday the 19th", "Saturday, 19 December"):
# it, not the weekday, says which Saturday (by hand "Saturday the 19th" was dated the
# coming Saturday, the 12th). Read only with "the", an ordinal ending or a month: "on
# Saturday 3 friends came" names no day.
_DAY_AFTER = re.compile(rf",? (the )?(\d{{1,2}})(st|nd|rd|th)?(?: of)?(?: {_MONTH_WORD})?\b",
                        re.IGNORECASE)


def _weekday_of_month(today: date, target: int, day: int, month: str | None, past: bool
                      ) -> date | None:
    """The nearest day ``day`` of a month (of ``month`` when named) from ``today`` on, or
    up to it when ``past``; None when that day is no ``target`` weekday (the words
    disagree: "Friday the 19th" when the 19th is a Saturday) or no such day exists."""
    step = -1 if past else 1
    if month:
        wanted = _month(month)
        candidates = [(today.year + step * k, wanted) for k in (0, 1)]
    else:
        after = today.month + step
        candidates = [(today.year, today.month),
                      (today.year + (after - 1) // 12, (after - 1) % 12 + 1)]
    for year, at in candidates:
        try:
            found = date(year, at, day)
        except ValueError:  # no 31st in this month
            continue
        if found <= today if past else found >= today:
            return found if found.weekday() == target else None
    return None


def _holiday(name: str, year: int) -> date:
    """The day of the holiday ``name`` (as ``_HOLIDAY_WORD`` reads it) in ``year``."""
    name = re.sub(r"^(new year|valentine)(?!s)", r"\1s",
                  name.lower().replace("'", "").replace("’", ""))
    if name == "thanksgiving":  # the fourth Thursday of November (the US one)
        first = date(year, 11, 1)
        return first + timedelta(days=(3 - first.weekday()) % 7 + 21)
    if name == "easter":  # the Gregorian computus (Meeus/Jones/Butcher)
        a, b, c = year % 19, year // 100, year % 100
        d, e = divmod(b, 4)
        g = (8 * b + 13) // 25
        h = (19 * a + b - d - g + 15) % 30
        i, k = divmod(c, 4)
        m = (32 + 2 * e + 2 * i - h - k) % 7
        n = (a + 11 * h + 22 * m) // 451
        month, day = divmod(h + m - 7 * n + 114, 31)
        return date(year, month, day + 1)
    month, day = _FIXED_HOLIDAYS[name]
    return date(year, month, day)


def _holiday_near(name: str, which: str, today: date) -> date:
    """"last Christmas": the one before ``today``; "next": the one after; "this": the one
    of ``today``'s year."""
    this_year = _holiday(name, today.year)
    if which in ("last", "this past"):
        return this_year if this_year < today else _holiday(name, today.year - 1)
    if which == "next":
        return this_year if this_year > today else _holiday(name, today.year + 1)
    return this_year


def _saturday(today: date, weeks: int) -> str:
    """The weekend ``weeks`` from the one of ``today``'s week (Monday to Sunday)."""
    saturday = today + timedelta(days=5 - today.weekday(), weeks=weeks)
    return f"weekend of {format_date(saturday)}"


def _resolve(match: re.Match[str], sentence: str, today: date, focus: date | None
             ) -> str | None:
    (fixed, which, unit, wday_which, wday, count, count_unit, direction, ahead,
     ahead_unit, holiday_which, holiday) = match.groups()
    if holiday:
        return format_date(_holiday_near(holiday, holiday_which.lower(), today))
    if fixed:
        word = fixed.lower()
        if word == "the weekend before last":
            return _saturday(today, -2)
        if word == "over the weekend":  # the last one in a sentence told in the past
            past = _past_at(match, sentence)
            shift = -((today.weekday() - 5) % 7) if past else (5 - today.weekday()) % 7
            return f"weekend of {format_date(today + timedelta(days=shift))}"
        if word.endswith(("this week", "before last", "fortnight ago")):
            back = 0 if word.endswith("this week") else 2
            return f"week of {format_date(today - timedelta(days=today.weekday(), weeks=back))}"
        if word.endswith("this month"):
            return _month_year(today)
        days = {"the day before yesterday": -2, "yesterday": -1, "last night": -1,
                "tomorrow": 1, "the day after tomorrow": 2}.get(word, 0)
        return format_date(today + timedelta(days=days))
    if unit:
        step = {"last": -1, "past": -1, "this past": -1, "this": 0, "next": 1}[which.lower()]
        unit = unit.lower()
        if unit == "weekend":
            return _saturday(today, step)
        if unit == "week":
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
            return f"week of {format_date(monday)}"
        if unit == "month":
            month = today.month - 1 + step
            return _month_year(date(today.year + month // 12, month % 12 + 1, 1))
        if unit == "year":
            return _year(today.year + step)
        return f"{unit} {_year(today.year + (step if unit != 'winter' or step else 0))}"
    if wday:
        short = _SHORT_WEEKDAYS.get(wday.lower())
        if short is not None and not wday[0].isupper():
            return None  # "last sat", "on wed…": a word, not a day
        target = _WEEKDAYS.index(wday.lower()) if short is None else short
        past = _past_at(match, sentence)
        dated = _DAY_AFTER.match(sentence, match.end())
        # "moved to Sunday the 13th", "until Friday the 18th": a past verb tells of the
        # change, not of the day, which may come either way.
        either = wday_which.lower() in _TO_A_DAY
        if dated is not None and (dated.group(1) or dated.group(3) or dated.group(4)):
            day_of_month, named = int(dated.group(2)), dated.group(4)
            found = _weekday_of_month(today, target, day_of_month, named, past and not either)
            if found is None and either:
                found = _weekday_of_month(today, target, day_of_month, named, True)
            return format_date(found) if found else None
        if either:
            return None  # "to Sunday school": only a day of the month makes it a date
        day = _weekday(today, target, wday_which.lower(), past)
        if (wday_which.lower() == "on" and not past and focus is not None
                and day < focus <= day + timedelta(days=7)):
            return None  # the coming one, or the one after ``focus``: see resolve_relative
        return format_date(day)
    if ahead:
        # "In two days" is a date only in a sentence about what comes: "I read it in two
        # days" says how long.
        if _past_at(match, sentence):
            return None
        count, count_unit, direction = ahead, ahead_unit, "from now"
    number = [w for w in count.lower().split() if w not in ("a", "of")] or ["a"]
    n = int(count) if count.isdigit() else _NUMBERS[number[0]]
    if direction.lower() == "from now":
        n = -n
    unit = count_unit.lower().rstrip("s")
    if unit == "day":
        return format_date(today - timedelta(days=n))
    if unit == "weekend":
        return _saturday(today, -n)
    if unit == "week":
        monday = today - timedelta(days=today.weekday()) - timedelta(weeks=n)
        return f"week of {format_date(monday)}"
    if unit == "month":
        month = today.month - 1 - n
        return _month_year(date(today.year + month // 12, month % 12 + 1, 1))
    return _year(today.year - n)


# Chinese: a day near the session's, a named week (and a day of it), a named month or
# year, or a count back or ahead. Longer forms first ("大前天" over "前天", "上上周" over
# "上周"). Not dates: "马上周末" (soon, the weekend), "这周围" (around here), "上周一起"
# (together), "这周天气" (the weather), "爬上月球", "第三天后", "2019年前后".
_CJK_NUMBER = r"[一二两三四五六七八九十]{1,3}|\d{1,2}"
_CJK_RELATIVE = re.compile(
    r"(大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日|明天|明晚|明日|大后天|后天)"
    r"|(前年|去年|今年|明年|后年)"
    r"|(?<![马早晚路身桌楼线一剩留底以])(?:"
    r"(上上|上|这|本|下下|下)个?(?:周|星期|礼拜)"
    r"(末|[一二三四五六日天](?![直起样些定般共点气]))?(?![围边到全期年岁刊])"
    r"|(上|这|本|下)个?月(?![饼亮光球台色]))"
    rf"|(?<![\d一二两三四五六七八九十几第])({_CJK_NUMBER})(个月|个星期|个礼拜|天|周|年)"
    r"(?:以|之)?(前|后)"
)
_CJK_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
               "九": 9}
_CJK_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CJK_STEP = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}


def _cjk_number(text: str) -> int:
    """"三" → 3, "十二" → 12, "二十" → 20, "12" → 12."""
    if text.isdigit():
        return int(text)
    if "十" not in text:
        return _CJK_DIGITS[text] if len(text) == 1 else int("".join(
            str(_CJK_DIGITS[c]) for c in text))
    tens, _, ones = text.partition("十")
    return (_CJK_DIGITS[tens] if tens else 1) * 10 + (_CJK_DIGITS[ones] if ones else 0)


def _resolve_cjk(match: re.Match[str], today: date) -> str | None:
    day_word, year_word, week_which, week_day, month_which, count, unit, direction = (
        match.groups())
    if day_word:
        shift = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "明天": 1,
                 "明晚": 1, "明日": 1, "后天": 2, "大后天": 3}.get(day_word, 0)
        return format_date(today + timedelta(days=shift))
    if year_word:
        return _year(today.year + {"前年": -2, "去年": -1, "明年": 1, "后年": 2}.get(year_word, 0))
    if week_which:
        monday = today - timedelta(days=today.weekday(), weeks=-_CJK_STEP[week_which])
        if week_day == "末":
            return f"weekend of {format_date(monday + timedelta(days=5))}"
        if week_day:
            return format_date(monday + timedelta(days=_CJK_WEEKDAY[week_day]))
        return f"week of {format_date(monday)}"
    if month_which:
        month = today.month - 1 + _CJK_STEP[month_which]
        return _month_year(date(today.year + month // 12, month % 12 + 1, 1))
    n = _cjk_number(count) * (-1 if direction == "前" else 1)
    if unit == "天":
        return format_date(today + timedelta(days=n))
    if unit == "年":
        return _year(today.year + n)
    if unit == "个月":
        month = today.month - 1 + n
        return _month_year(date(today.year + month // 12, month % 12 + 1, 1))
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=n)
    return f"week of {format_date(monday)}"


# Spanish, French, German, Italian, Portuguese and Dutch (as ``other_languages.py``
# reads them): "ayer [7 May 2023]", "la semaine prochaine [week of 15 May 2023]",
# "letzten Freitag [5 May 2023]", "tre giorni fa [5 May 2023]", "vorig jaar [2022]".
_OTHER_DAYS = {"anteayer": -2, "antier": -2, "ayer": -1, "hoy": 0, "mañana": 1,
               "pasado mañana": 2, "avant-hier": -2, "hier": -1, "aujourd'hui": 0,
               "demain": 1, "après-demain": 2, "vorgestern": -2, "gestern": -1, "heute": 0,
               "morgen": 1, "übermorgen": 2, "l'altro ieri": -2, "altroieri": -2, "ieri": -1,
               "oggi": 0, "domani": 1, "dopodomani": 2, "anteontem": -2, "ontem": -1,
               "hoje": 0, "amanhã": 1, "depois de amanhã": 2, "eergisteren": -2,
               "gisteren": -1, "vandaag": 0, "overmorgen": 2}
_OTHER_UNITS = {"semana": "week", "semanas": "week", "semaine": "week", "semaines": "week",
                "woche": "week", "wochen": "week", "settimana": "week", "settimane": "week",
                "week": "week", "weken": "week", "mes": "month", "meses": "month",
                "mois": "month", "monat": "month", "monate": "month", "monaten": "month",
                "mese": "month", "mesi": "month", "mês": "month", "maand": "month",
                "maanden": "month", "año": "year", "años": "year", "an": "year",
                "ans": "year", "année": "year", "années": "year", "jahr": "year",
                "jahre": "year", "jahren": "year", "anno": "year", "anni": "year",
                "ano": "year", "anos": "year", "jaar": "year", "jaren": "year",
                "fin de semana": "weekend", "week-end": "weekend", "weekend": "weekend",
                "wochenende": "weekend", "fine settimana": "weekend",
                "fim de semana": "weekend", "día": "day", "días": "day", "dia": "day",
                "dias": "day", "jour": "day", "jours": "day", "tag": "day", "tage": "day",
                "tagen": "day", "giorno": "day", "giorni": "day", "dag": "day",
                "dagen": "day"}
_OTHER_WEEKDAYS = {name: i for i, names in enumerate((
    "lunes lundi montag lunedì lunedi segunda segunda-feira maandag",
    "martes mardi dienstag martedì martedi terça terca terça-feira dinsdag",
    "miércoles miercoles mercredi mittwoch mercoledì mercoledi quarta quarta-feira woensdag",
    "jueves jeudi donnerstag giovedì giovedi quinta quinta-feira donderdag",
    "viernes vendredi freitag venerdì venerdi sexta sexta-feira vrijdag",
    "sábado sabado samedi samstag sonnabend sabato zaterdag",
    "domingo dimanche sonntag domenica zondag")) for name in names.split()}
# The months in these languages, lower-cased. Not the English ones ("april", "august"),
# nor "mars" (a planet, and a name) or "marco" (a name): "março" is written with its
# accent.
_OTHER_MONTHS = frozenset((
    "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
    "septiembre", "setiembre", "octubre", "noviembre", "diciembre", "janvier",
    "février", "fevrier", "avril", "mai", "juin", "juillet", "août", "aout",
    "octobre", "novembre", "décembre", "decembre", "januar", "jänner", "februar",
    "märz", "juni", "juli", "oktober", "dezember", "gennaio", "febbraio", "aprile",
    "maggio", "giugno", "luglio", "settembre", "ottobre", "dicembre", "janeiro",
    "fevereiro", "março", "abril", "maio", "junho", "julho", "setembro", "outubro",
    "dezembro", "januari", "februari", "maart", "mei", "augustus"))
# The days and months of these languages (lower-cased): values a correction takes back,
# as the English ones are (``other_languages.foreign_value_swaps``).
OTHER_WEEKDAYS = frozenset(_OTHER_WEEKDAYS)
OTHER_CALENDAR_WORDS = OTHER_WEEKDAYS | _OTHER_MONTHS
_OTHER_COUNTS = {"un": 1, "una": 1, "uno": 1, "une": 1, "ein": 1, "einem": 1, "einer": 1,
                 "einen": 1, "um": 1, "uma": 1, "een": 1, "dos": 2, "deux": 2, "zwei": 2,
                 "due": 2, "dois": 2, "duas": 2, "twee": 2, "tres": 3, "trois": 3, "drei": 3,
                 "tre": 3, "três": 3, "drie": 3, "cuatro": 4, "quatre": 4, "vier": 4,
                 "quattro": 4, "quatro": 4, "cinco": 5, "cinq": 5, "fünf": 5, "cinque": 5,
                 "vijf": 5, "seis": 6, "six": 6, "sechs": 6, "sei": 6, "zes": 6}
_LAST = ("pasado", "pasada", "dernier", "dernière", "letzte", "letzten", "letztes",
         "letzter", "vorige", "vorigen", "voriges", "scorso", "scorsa", "passado", "passada",
         "vorig", "afgelopen")
_NEXT = ("próximo", "próxima", "proximo", "proxima", "que viene", "prochain", "prochaine",
         "nächste", "nächsten", "nächstes", "nächster", "prossimo", "prossima", "que vem",
         "volgende", "volgend")
_THIS = ("este", "esta", "ce", "cette", "diese", "diesen", "dieses", "dieser", "questo",
         "questa", "quest'", "quest’", "deze", "dit")


def alternation(names: Iterable[str]) -> str:
    """An alternation of ``names``, the longest first (at one place the first that
    matches wins: "pasado mañana" over "mañana")."""
    return "|".join(sorted(map(re.escape, names), key=len, reverse=True))


_OTHER_DAY = alternation(_OTHER_DAYS)
_OTHER_UNIT = alternation(k for k, v in _OTHER_UNITS.items() if v != "day")
_OTHER_WEEKDAY = alternation(_OTHER_WEEKDAYS)
_OTHER_COUNT = alternation(_OTHER_COUNTS) + r"|\d{1,2}"
_ANY_UNIT = alternation(_OTHER_UNITS)
_OTHER_RELATIVE = re.compile(
    # "esta mañana" is this morning, "guten Morgen" good morning, "hier" German for here.
    rf"(?<!\w)(?:(?<!la )(?<!esta )(?<!una )(?<!cada )(?<!guten )(?<!heute )(?<!am )"
    rf"(?<!jeden )(?<!de )({_OTHER_DAY})"
    rf"|({alternation(_LAST + _NEXT + _THIS)})(?: |(?<=['’]))({_OTHER_UNIT}|{_OTHER_WEEKDAY})"
    rf"|({_OTHER_UNIT}|{_OTHER_WEEKDAY}) ({alternation(_LAST + _NEXT)})"
    # ("ha" without its accent is Italian "has": "mia figlia ha 3 anni" is her age.)
    rf"|(?:hace|il y a|vor|há) ({_OTHER_COUNT}) ({_ANY_UNIT})"
    rf"|({_OTHER_COUNT}) ({_ANY_UNIT}) (?:fa|atrás|atras|geleden)"
    rf"|(?:dentro de|dans|in|tra|fra|daqui a|over) ({_OTHER_COUNT}) ({_ANY_UNIT}))"
    r"(?![\w'’-])",
    re.IGNORECASE,
)
# A sentence in ASCII is searched only when it has one of these words (the search costs
# twice the English one's, and most sentences are English).
_OTHER_TRIGGERS = frozenset(
    word for phrase in (*_OTHER_DAYS, *_LAST, *_NEXT, *_OTHER_WEEKDAYS, "hace", "vor",
                        "fa", "atras", "geleden", "dentro", "dans", "tra", "fra", "daqui")
    for word in re.findall(r"[^\W\d_]+", phrase) if word.isascii() and len(word) > 2
    and word not in ("que", "pasado", "last", "next")) | frozenset(
    unit for unit in _OTHER_UNITS if unit.isascii() and " " not in unit and unit not in (
        "week", "weekend", "an", "ans", "dia", "dag", "tag"))
_LETTERS = re.compile(r"[^\W\d_]+")
# French for yesterday is German and Dutch for here: read only beside French words.
_FRENCH = re.compile(r"\b(?:je|j'|nous|vous|c'est|suis|avons|ai|était|une|des|les|soir|matin)\b",
                     re.IGNORECASE)


def _resolve_other(match: re.Match[str], sentence: str, today: date) -> str | None:
    (day_word, which, unit, unit_first, which_after, back, back_unit, back2, back2_unit,
     ahead, ahead_unit) = match.groups()
    if day_word:
        word = day_word.lower()
        if word == "hier" and not _FRENCH.search(sentence):
            return None
        if word == "morgen" and day_word[0].isupper() and match.start() > 0:
            return None  # "der Morgen": the morning
        return format_date(today + timedelta(days=_OTHER_DAYS[word]))
    if which or which_after:
        word = (which or which_after).lower()
        thing = (unit if which else unit_first).lower()
        step = -1 if word in _LAST else 1 if word in _NEXT else 0
        if thing in _OTHER_WEEKDAYS:
            return format_date(_weekday(today, _OTHER_WEEKDAYS[thing],
                                        {-1: "last", 0: "this", 1: "next"}[step], past=False))
        return _period(today, _OTHER_UNITS[thing], step)
    count, unit_word, sign = ((back, back_unit, -1) if back else (back2, back2_unit, -1)
                              if back2 else (ahead, ahead_unit, 1))
    number = int(count) if count.isdigit() else _OTHER_COUNTS[count.lower()]
    return _period(today, _OTHER_UNITS[unit_word.lower()], sign * number)


def _period(today: date, unit: str, step: int) -> str:
    """The day, week, weekend, month or year ``step`` of them from ``today``'s."""
    if unit == "day":
        return format_date(today + timedelta(days=step))
    if unit == "weekend":
        return _saturday(today, step)
    if unit == "week":
        return f"week of {format_date(today - timedelta(days=today.weekday(), weeks=-step))}"
    if unit == "month":
        month = today.month - 1 + step
        return _month_year(date(today.year + month // 12, month % 12 + 1, 1))
    return _year(today.year + step)


# What ``resolve_relative`` adds after a relative date: " [7 May 2023]".
RESOLVED_DATE = re.compile(r" \[[^\]\n]{1,40}\]")


def resolve_relative(sentence: str, today: date | None, focus: date | None = None) -> str:
    """``sentence`` with each relative date followed by the date it means, in brackets.

    ``focus``: the day to come the conversation named last (``day_ahead``). A weekday "on
    Monday" told of what comes is the coming Monday, unless ``focus`` falls in the week
    after it: then it may as well be the Monday after ``focus`` ("We arrive next Friday.
    … we leave on Monday."), or ``focus`` itself when that is a Monday, and it is left as
    it was said rather than dated wrong (by hand a trip's summary read "we leave on
    Monday [7 Dec 2026]" beside "We arrive next Friday [11 Dec 2026]", and "… from
    Amsterdam on Thursday [10 Dec 2026]" beside "Thursday [17 Dec 2026] the 17th"). A day
    named before it in the sentence counts as well."""
    if today is None:
        return sentence
    if not sentence.isascii():
        sentence = _resolve_all(sentence, _CJK_RELATIVE,
                                lambda match: _resolve_cjk(match, today))
    if not sentence.isascii() or not _OTHER_TRIGGERS.isdisjoint(
            _LETTERS.findall(sentence.lower())):
        original = sentence
        sentence = _resolve_all(sentence, _OTHER_RELATIVE,
                                lambda match: _resolve_other(match, original, today))
    if not _RELATIVE.search(sentence):
        return sentence
    latest = [focus]

    def resolve(match: re.Match[str]) -> str | None:
        resolved = _resolve(match, sentence, today, latest[0])
        day = _day(resolved) if resolved else None
        if day is not None and day > today:
            latest[0] = day
        return resolved

    return _resolve_all(sentence, _RELATIVE, resolve)


def _day(text: str) -> date | None:
    """The day ``text`` is, as ``format_date`` writes one ("11 Dec 2026"), or None."""
    match = _DAY_MONTH_YEAR.fullmatch(text)
    return _to_date(match.groups(), "dmy") if match else None


def day_ahead(text: str, today: date | None) -> date | None:
    """The last day after ``today`` that ``text`` names as ``resolve_relative`` dates one
    ("… next Friday [11 Dec 2026]"), or None: what a later "on Monday" is read beside."""
    if today is None or "[" not in text:
        return None
    found = None
    for match in RESOLVED_DATE.finditer(text):
        day = _day(match.group()[2:-1])
        if day is not None and day > today:
            found = day
    return found


def _resolve_all(sentence: str, pattern: re.Pattern[str],
                 resolve: Callable[[re.Match[str]], str | None]) -> str:
    out: list[str] = []
    last = 0
    for match in pattern.finditer(sentence):
        if sentence.startswith(" [", match.end()):  # resolved already (a summary merged again)
            continue
        try:
            resolved = resolve(match)
        # The calendar's edge (a session of year 1 or 9999), or a numeral not read ("十十").
        except (OverflowError, ValueError, KeyError):
            resolved = None
        out.append(sentence[last:match.end()])
        if resolved:
            out.append(f" [{resolved}]")
        last = match.end()
    out.append(sentence[last:])
    return "".join(out)
