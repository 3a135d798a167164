"""Each cleaning function on hand-written messages (and one real 20 Newsgroups post)."""

import base64
import random
import re

import pytest

from bpetopics.text.cleaning import (
    clean_message,
    normalize_newlines,
    strip_binary,
    strip_footer,
    strip_headers,
    strip_quotes,
    tokenize,
)

POST = """From: jdoe@cs.example.edu (John Doe)
Subject: Re: Orbital mechanics question
Organization: Example University
Lines: 14
NNTP-Posting-Host: cs.example.edu
References: <1993Apr1.1@x.edu>
 <1993Apr2.2@y.edu>

In article <1993Apr1.1@x.edu> jsmith@x.edu (Jane Smith) writes:
>How long does a Hohmann transfer to Mars take?
> > Nested quote about rockets.
|Bar-quoted line about fuel.

About eight and a half months, give or take a few weeks.
The launch window opens every twenty-six months.

-- 
John Doe, Example University     jdoe@cs.example.edu
"Ad astra per aspera"
"""

HEADER_LINE = re.compile(r"(?m)^(From|Subject|Organization|Lines):")


# ----------------------------------------------------------------------------- headers
def test_strip_headers_removes_the_header_block_and_folded_lines():
    out = strip_headers(POST)
    assert not HEADER_LINE.search(out)
    assert "1993Apr2.2@y.edu" not in out  # folded continuation of References
    assert out.startswith("In article")
    assert "About eight and a half months" in out


def test_strip_headers_leaves_plain_text_alone():
    text = "Note: this is a plain text file.\nIt has no header.\n\nSecond paragraph."
    assert strip_headers(text) == text
    text2 = "The first paragraph\nof an essay.\n\nThe second."
    assert strip_headers(text2) == text2


def test_strip_headers_removes_forwarded_headers_in_the_body():
    text = (
        "From: a@b.c\nSubject: fwd\n\nForwarded message follows.\n"
        "From: someone@else.org (Someone)\nSubject: original subject\n"
        "Organization: Elsewhere\nLines: 3\n\nThe original body."
    )
    out = strip_headers(text)
    assert not HEADER_LINE.search(out)
    assert "Forwarded message follows." in out and "The original body." in out


def test_strip_headers_on_a_message_that_is_all_header():
    assert strip_headers("From: a@b.c\nSubject: empty\n") == ""


# ------------------------------------------------------------------------------ quotes
def test_strip_quotes_removes_quoted_and_attribution_lines():
    out = strip_quotes(strip_headers(POST))
    assert not re.search(r"(?m)^\s*[>|]", out)
    assert "In article" not in out and "writes:" not in out
    assert "Hohmann" not in out and "fuel" not in out
    assert "About eight and a half months" in out


def test_strip_quotes_handles_initials_and_indented_quotes():
    text = "LM>>The rape has passed.\nLM>True.\n   > indented quote\nMy own reply.\n"
    assert strip_quotes(text).strip() == "My own reply."


def test_strip_quotes_keeps_prose_that_mentions_saying():
    text = "He said: no, and then he left.\nThe paper says: more study is needed here, then goes on.\n"
    assert strip_quotes(text) == text
    text2 = "John Smith <js@x.org> wrote:\n> hi\nhello back\n"
    assert strip_quotes(text2) == "hello back\n"


# ------------------------------------------------------------------------------ footer
def test_strip_footer_cuts_at_the_signature_delimiter():
    out = strip_footer(strip_quotes(strip_headers(POST)))
    assert "Ad astra" not in out and "jdoe@cs.example.edu" not in out
    assert out.rstrip().endswith("every twenty-six months.")


def test_strip_footer_removes_a_boxed_signature_whole():
    text = (
        "Body text that matters.\n\n"
        "+----------------------------------+\n"
        "| Jim Savoy  savoy@hg.uleth.ca     |\n"
        "+----------------------------------+\n"
    )
    assert strip_footer(text) == "Body text that matters.\n"


def test_strip_footer_keeps_a_reply_below_a_rule():
    # A rule that separates a quoted question from a long answer is no signature.
    text = (
        "> the question\n\n----------\n\n"
        + "\n".join(f"Answer line {i} with ordinary prose in it." for i in range(8))
    )
    assert strip_footer(text) == text


def test_strip_footer_without_separator_or_far_from_the_end_is_a_no_op():
    text = "line one\n\nline two\nline three"
    assert strip_footer(text) == text
    far = "intro\n--\n" + "\n".join(f"body {i}" for i in range(30))
    assert strip_footer(far) == far
    assert strip_footer("--\nonly a first-line separator") == "--\nonly a first-line separator"


# ------------------------------------------------------------------------------ binary
def _uuencoded_block(n_lines=12, seed=0):
    rng = random.Random(seed)
    chars = "".join(chr(c) for c in range(0x21, 0x61))
    body = ["M" + "".join(rng.choice(chars) for _ in range(60)) for _ in range(n_lines)]
    return "begin 644 picture.gif\n" + "\n".join(body) + "\n%Q<7%Q<4T\n`\nend\n"


def test_strip_binary_removes_a_uuencoded_block():
    text = "Here is the picture you asked for.\n\n" + _uuencoded_block() + "\nEnjoy it.\n"
    out = strip_binary(text)
    assert "begin 644" not in out and "\nend\n" not in out
    assert out.split() == "Here is the picture you asked for. Enjoy it.".split()


def test_strip_binary_removes_uuencode_parts_without_begin_and_base64():
    rng = random.Random(1)
    blob = base64.encodebytes(bytes(rng.randrange(256) for _ in range(600))).decode()
    assert len(blob.splitlines()) >= 8
    text = "Part 2 of 3 follows.\n" + _uuencoded_block(seed=2).split("\n", 1)[1] + "Base64 too:\n" + blob + "Bye.\n"
    out = strip_binary(text)
    assert out.split("\n") == ["Part 2 of 3 follows.", "Base64 too:", "Bye.", ""]


def test_strip_binary_keeps_rules_urls_and_short_runs():
    text = (
        "See ftp://ftp.uu.net/pub/window-managers/very/long/path/file.tar.Z today\n"
        + "-" * 70 + "\n" + "=" * 70 + "\n" + "-" * 70 + "\n"
        "ftp.cs.example.edu:/pub/graphics/images/gifs/another_long_name.gif\n"
        "normal text line\n"
    )
    assert strip_binary(text) == text


def test_strip_binary_on_a_real_20newsgroups_post(shared_data):
    # comp.os.ms-windows.misc/9985 (train) is one part of a uuencoded bitmap posted
    # without a "begin" line; its tokens (max, ax, giz, ...) would capture a topic.
    from bpetopics.text import load_20newsgroups

    raw = load_20newsgroups(shared_data / "sklearn", subsets=["train"], categories=["comp.os.ms-windows.misc"],
                            download_if_missing=False)["train"]
    post = raw.texts[raw.ids.index("comp.os.ms-windows.misc/9985")]
    assert post.count("\n") > 900 and "MAX>'AX>'AX>'" in post
    cleaned = clean_message(post)
    assert cleaned.count("\n") < 20
    assert not re.search(r"(?m)^M[\x20-\x60]{40,}$", cleaned)
    tokens = tokenize(cleaned)
    assert "giz" not in tokens and tokens.count("max") <= 1
    assert len(tokens) < 60


# ---------------------------------------------------------------------------- pipeline
def test_normalize_newlines():
    assert normalize_newlines("a\r\nb\rc\n") == "a\nb\nc\n"


def test_clean_message_switches_and_crlf():
    crlf = POST.replace("\n", "\r\n")
    assert clean_message(crlf) == clean_message(POST)
    out = clean_message(POST)
    assert out.split() == (
        "About eight and a half months, give or take a few weeks.\n"
        "The launch window opens every twenty-six months."
    ).split()
    kept = clean_message(POST, headers=False, quotes=False, footers=False, binary=False)
    assert kept == POST


# ---------------------------------------------------------------------------- tokens
def test_tokenize_drops_numbers_punctuation_short_tokens_and_stop_words():
    text = "The X11R5 server (v2.0) crashed 386 times -- don't ask; it's GREAT!! E-mail me."
    assert tokenize(text) == ["the", "server", "crashed", "times", "don", "ask", "great", "mail"]
    stop = frozenset({"the", "don"})
    assert tokenize(text, stop_words=stop) == ["server", "crashed", "times", "ask", "great", "mail"]
    assert tokenize(text, min_length=5) == ["server", "crashed", "times", "great"]
    assert tokenize("Café Ökonomie naïve", min_length=3) == ["café", "ökonomie", "naïve"]


@pytest.mark.parametrize("seed", [0, 1])
def test_tokenize_equals_nltk_wordpunct_then_filter(seed):
    from nltk.tokenize import wordpunct_tokenize

    rng = random.Random(seed)
    pieces = ["word", "Mixed1", "x11", "42", "--", "it's", "e-mail", "über", "a", "ab", "abc",
              "foo_bar", "(paren)", "end.", "3d", "tab\there", "UPPER", "née", "__init__"]
    text = " ".join(rng.choice(pieces) for _ in range(400))
    expected = [t for t in wordpunct_tokenize(text.lower()) if t.isalpha() and len(t) >= 3]
    assert tokenize(text) == expected


def test_strip_headers_keeps_prose_that_mentions_header_fields():
    """Issue #14: a review with "from : ... subject : ..." lines and no blank line, and a
    paragraph opening with "Organization", are not header blocks: nothing is removed."""
    review = ("i went to see this film on a friday . " * 40 + "\n"
              "from : the director of the first one comes a sequel\n"
              "subject : a family that moves into a haunted house\n"
              + "the acting is fine but the plot drags . " * 40)
    assert strip_headers(review) == review
    for paragraph in ("Organization : the book has three parts and an index.",
                      "Organization: the book has three parts and an index.\nEach part has five chapters."):
        assert strip_headers(paragraph) == paragraph
    letter = "Dear Ann,\n\nFrom: the office\nTo: everyone\nThe party is on Friday."
    assert strip_headers(letter) == letter


def test_strip_headers_recognises_a_block_opening_with_a_broken_fold_or_a_misspelt_field():
    broken = (" uunet!olivea!sgigate!x.edu!keith\nSubject: Re: atheists\nFrom: keith@x.edu\n"
              "Lines: 15\n\nThe body.")
    assert strip_headers(broken) == "The body."
    misspelt = "Orginization: ODU\nFrom: kay@odu.edu\nSubject: Quadra 800\nLines: 16\n\nThe body."
    assert strip_headers(misspelt) == "The body."
