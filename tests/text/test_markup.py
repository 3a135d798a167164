"""HTML pages: their visible text, paragraph by paragraph, read by the folder loader and
by the sharded build alike."""

import warnings

import pytest

from bpetopics.text import load_folder
from bpetopics.text.markup import html_to_text, is_html_name
from bpetopics.text.passages import paragraphs
from bpetopics.text.records import FOLDER, Fields, chunks, parse_chunk

PAGE = """<!DOCTYPE html>
<html><head><title>Budget &amp; taxes</title><meta charset="utf-8">
<style>p { color: red }</style><script>var s = "<p>not shown</p>";</script></head>
<body><nav><a href="/">Home</a> | <a href="/news">News</a></nav>
<h1>The   budget</h1>
<p>The committee met on
Tuesday &mdash; and <b>agreed</b> to cut&nbsp;spending.</p><p>Second<br>line</p>
<!-- not shown either -->
<pre>kept
line breaks</pre><ul><li>one</li><li>two</li></ul><img src="x.png" alt="a picture">
</body></html>"""


def test_visible_text_drops_markup_scripts_styles_and_comments():
    text = html_to_text(PAGE)
    assert text == ("Budget & taxes\n\nHome | News\n\nThe budget\n\n"
                    "The committee met on Tuesday \u2014 and agreed to cut spending.\n\nSecond\nline\n\n"
                    "kept\nline breaks\n\none\n\ntwo")
    for hidden in ("not shown", "color", "charset", "href", "picture", "<", ">"):
        assert hidden not in text


def test_blocks_are_paragraphs_for_passages():
    assert paragraphs(html_to_text(PAGE))[:4] == [
        "Budget & taxes", "Home | News", "The budget", "The committee met on Tuesday \u2014 and agreed to cut spending."]


@pytest.mark.parametrize("markup, text", [
    ("<p>one<p>two", "one\n\ntwo"),                                        # unclosed paragraphs
    ("<head><title>T</title><meta x=1><body><p>body", "T\n\nbody"),      # head closed by body
    ("<p>a<script>b</script>c</p>", "ac"),
    ("plain words, no tags", "plain words, no tags"),
    ("<<< >>> </p></div>", "<<< >>>"),                                    # malformed: never raises
    ("", ""),
])
def test_odd_markup(markup, text):
    assert html_to_text(markup) == text


def test_html_names():
    assert is_html_name("a/Page.HTML") and is_html_name("x.htm") and is_html_name("y.xhtml")
    assert not is_html_name("notes.txt") and not is_html_name("html")


def test_folder_and_sharded_reading_take_the_visible_text(tmp_path):
    root = tmp_path / "pages"
    root.mkdir()
    (root / "budget.html").write_text(PAGE, encoding="utf-8")
    (root / "notes.txt").write_text("<p>kept as typed</p>\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # nothing to warn about
        docs = load_folder(root)
    assert docs.ids == ["budget.html", "notes.txt"]
    assert docs.texts == [html_to_text(PAGE), "<p>kept as typed</p>\n"]          # only .html files are HTML
    records = [parse_chunk(chunk, Fields()) for chunk, _ in chunks(root, FOLDER, Fields(), 10)]
    assert [t for r in records for t in r.texts] == docs.texts


def test_encode_reads_one_html_file_as_its_visible_text(tmp_path):
    from bpetopics.runs.encode import read_documents

    page = tmp_path / "page.htm"
    page.write_text(PAGE, encoding="utf-8")
    assert read_documents(page) == (["page.htm"], [html_to_text(PAGE)])
