"""The one-page compile report (tracer/report, docs/report.md): what the page holds, read
from its HTML, and the page in a real browser (headless Chromium driven by Playwright)."""

import html
import inspect
import os
import re
import shutil
import weakref

import numpy as np
import pytest

import tracer as tt
from codegen.lower import plan_buffers
from tracer.cli import main
from tracer.ir import format_graph
from tracer.report import write_report
from tracer.report.ir_text import printed_lines
from tracer.report.svg import layers


@tt.function
def step(x, w):
    with tt.GradientTape() as tape:
        tape.watch(w)
        h = tt.tanh(x @ w)
        y = tt.reduce_sum(h * h + tt.sin(h))
    return y, tape.gradient(y, w)


SOURCE, FIRST = inspect.getsourcelines(step.python_function)
FILE = os.path.abspath(inspect.getsourcefile(step.python_function))
TANH_LINE = FIRST + next(k for k, line in enumerate(SOURCE) if "tt.tanh" in line)
SUM_LINE = TANH_LINE + 1


class StandInProfile:
    """What the report asks of a profile (tracer.profiler's): times by line and by node."""

    def line_seconds(self, concrete):
        return {(FILE, TANH_LINE): 0.002, (FILE, SUM_LINE): 0.001, (None, "step"): 0.0005}

    def node_seconds(self, concrete):
        return {"%3": 0.0015}


X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
W = np.linspace(0, 2, 20, dtype=np.float32).reshape(4, 5)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """(the ConcreteFunction reported, the page's path, its HTML)."""
    step(X, W)
    step(X[:2], W)  # a retrace: the first dimension changed
    concrete = step.get_concrete_function(X, W)
    path = str(tmp_path_factory.mktemp("report") / "step.html")
    assert step.report(path, profile=StandInProfile(), args=[X, W]) == path
    with open(path, encoding="utf-8") as handle:
        return concrete, path, handle.read()


def _row_key(page, line):
    """The source-line key the page gives the row of `line`."""
    return re.search(rf'data-line="{line}" data-locs="(L\d+)"', page).group(1)


def _kernel_names(c):
    """The kernels defined in `c`, once each (a kernel's versions on float's grid and not:
    templates/grid_mode.c.j2)."""
    names = re.findall(r"^(?:static|TR_PART) (?:TR_NOINLINE )?\w+ (k\d+_\w+)\(", c, flags=re.M)
    return list(dict.fromkeys(re.sub(r"_(plain|grid)$", "", n) for n in names))


def test_the_page_holds_the_source_with_each_lines_time_and_nodes(report):
    concrete, _, page = report
    for line in SOURCE:
        assert html.escape(line.rstrip("\n"), quote=False) in page
    key = _row_key(page, TANH_LINE)
    row = re.search(rf'<tr class="src" data-line="{TANH_LINE}".*?</tr>', page, re.S).group(0)
    assert "2 ms" in row and "∇" in row  # its time, and nodes of the gradient too
    assert "500 µs in the calls themselves" in page
    final = [n for n in concrete.stages.final.nodes if n.location and n.location[1] == TANH_LINE]
    assert final and page.count(f'class="ir-line" data-locs="{key}"') >= len(final)


def test_every_stage_is_shown_with_the_diff_its_pass_made(report):
    concrete, _, page = report
    for name in concrete.stages:
        assert f'id="stage-{name}"' in page
    fused = page.split('id="stage-optimized"')[1]
    assert "what fuse changed" in fused
    added = re.findall(r'<div class="d add">(.*?)</div>', fused.split("IR after optimized")[0])
    assert any("fused[kernel=" in html.unescape(text) for text in added)
    for stage, graph in concrete.stages.items():  # the lines are the printer's, node by node
        lines = printed_lines(graph)
        assert "\n".join(line.text for line in lines) == format_graph(graph), stage


def test_kernels_and_their_c_are_linked_to_the_nodes_and_lines(report):
    concrete, _, page = report
    c = concrete.c_source()
    names = _kernel_names(c)
    assert len(names) == 4
    for name in names:
        assert f'id="c-def-{name}"' in page
    kernels = [n.attrs["kernel"].name for n in concrete.stages.final.nodes if n.op == "fused"]
    assert len(kernels) == 2
    for kernel in kernels:
        c_name = next(name for name in names if name.endswith(kernel[1:]))
        assert f"<code>{kernel}</code>" in page and f'href="#c-def-{c_name}"' in page
    tanh = next(name for name in names if "tanh" in name)
    definition = re.search(rf'<div class="c-line def"[^>]*id="c-def-{tanh}"[^>]*>', page)
    assert _row_key(page, TANH_LINE) in definition.group(0)
    assert "%3: 1.5 ms" not in page and re.search(r'data-name="%3"><span class="t">1.5 ms', page)


def test_the_buffer_plan_agrees_with_the_modules_workspace(report):
    concrete, _, page = report
    workspace = int(re.search(r'class="workspace" data-bytes="(\d+)"', page).group(1))
    peak = int(re.search(r'class="peak" data-bytes="(\d+)"', page).group(1))
    plan = plan_buffers(concrete.stages.final, concrete._updates)
    assert workspace == concrete._executable.plan.workspace_bytes == plan.layout.size
    assert 0 < peak <= workspace
    assert page.count('class="value') == len(plan.layout.placement)
    assert "live there:" in page


def test_compile_time_by_stage_and_the_retraces(report):
    concrete, _, page = report
    for phase in ("trace", *(f"pass: {name}" for name in list(concrete.stages)[1:]), "cc"):
        assert f"<td>{phase}</td>" in page
    assert step._retrace_reasons
    for reason in step._retrace_reasons:
        assert html.escape(reason) in page
    assert "(this report)" in page


def test_the_graph_is_inline_svg_of_every_node_and_nothing_is_fetched(report):
    concrete, _, page = report
    svg = re.search(r"<svg .*?</svg>", page, re.S).group(0)
    assert svg.count('<g class="node') == len(concrete.stages.final.nodes)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<link" not in page and not re.search(r"<script[^>]+src", page)
    # inputs, x @ w, tanh, the fused loss and gradient, its `get`, then the gradient's matmul
    assert layers(concrete.stages.final.nodes)[id(concrete.stages.final.outputs[1])] == 5


def test_a_concrete_function_alone_and_the_interpreter(tmp_path, report):
    concrete, _, _ = report
    step = concrete._function()
    page = open(concrete.report(str(tmp_path / "one.html"))).read()
    assert 'id="stage-optimized"' in page  # its tt.function's retraces, through a weakref
    assert all(html.escape(reason) in page for reason in step._retrace_reasons)
    concrete._function = None  # a trace whose tt.function is gone knows only itself
    try:
        page = open(write_report(concrete, str(tmp_path / "alone.html"))).read()
    finally:
        concrete._function = weakref.ref(step)
    assert "Only this trace is known" in page
    interpreted = tt.function(lambda x: tt.reduce_sum(tt.exp(x)), backend="interpreter")
    interpreted(X)
    page = open(write_report(interpreted, str(tmp_path / "i.html"))).read()
    assert "runs on the numpy interpreter" in page and "<svg" in page
    with pytest.raises(ValueError, match="not been traced yet"):
        write_report(tt.function(lambda x: x), str(tmp_path / "none.html"))


def test_the_command_line_writes_a_report(tmp_path, capsys):
    script = tmp_path / "model.py"
    script.write_text("import tracer as tt\n\n\ndef loss(x, b):\n    return tt.reduce_sum(x * b)\n")
    out = tmp_path / "loss.html"
    args = ["report", f"{script}:loss", "--args", "f32[3,4], f32[4]", "--out", str(out)]
    assert main(args) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert "return tt.reduce_sum(x * b)" in out.read_text()


# --- in a browser ----------------------------------------------------------------------------


def _needed(found, why):
    """Skip, saying why, where the browser test cannot run; on CI (CI set) fail instead."""
    if not found:
        if os.environ.get("CI"):
            pytest.fail(f"{why}: CI must run the browser test")
        pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    _needed(sync_playwright, "playwright is not installed (it is in the test extra)")
    chromium = shutil.which("chromium")
    _needed(chromium, "no chromium here (Debian's `chromium` package; .ci/run installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


def test_the_page_in_a_browser_shows_a_lines_nodes_and_c(report, browser, tmp_path):
    concrete, path, _ = report
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors, requests = [], []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"file://{path}")
    page.click(f'tr.src[data-line="{TANH_LINE}"]')
    selection = page.locator("#selection")
    assert selection.is_visible()
    assert "tanh" in selection.locator(".sel-ir").inner_text()
    tanh = next(name for name in _kernel_names(concrete.c_source()) if "tanh" in name)
    assert tanh in selection.locator(".sel-c").inner_text()
    assert "k_tanh" in selection.locator(".sel-kernels").inner_text()
    assert page.locator("#tab-ir .ir-line.hit").count() > 0
    page.click('button[data-tab="c"]')
    assert page.locator(f"#c-def-{tanh}.hit").is_visible()
    page.click('button[data-tab="graph"]')
    assert page.locator("svg.graph .node.hit").count() > 0
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 1000
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    page.close()
