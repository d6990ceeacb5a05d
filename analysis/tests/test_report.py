import re
from urllib.parse import unquote

from conftest import ROOT, run_cli
from omnilearn_analysis.report import POINT_FIGURES, write_report


def test_report_for_a_run_and_a_sweep(quick_run, quick_sweep, tmp_path):
    html_path = write_report([str(quick_run), str(quick_sweep)], str(tmp_path / "report"))
    page = html_path.read_text()
    assert page.count("data:image/png;base64,") >= 4
    assert "Policies compared" in page and "Change against uniform (%)" in page
    pngs = sorted(p.name for p in (tmp_path / "report").glob("*.png"))
    assert any(name.endswith("batch.png") for name in pngs)
    assert any(name.endswith("bars.png") for name in pngs)


def test_sweep_report_links_each_points_figures(quick_sweep, tmp_path):
    out = tmp_path / "report"
    page = write_report([str(quick_sweep)], str(out)).read_text()
    links = [unquote(h) for h in re.findall(r'href="([^"]+)"', page)]
    points = [p.name for p in quick_sweep.iterdir() if (p / "summary.json").exists()]
    assert len(points) == 6
    for point in points:  # every point lists its batch, breakdown and iteration figures
        mine = sorted(link for link in links if f"points/{point}/" in link)
        assert [link.rsplit("/", 1)[1] for link in mine] == sorted(f"{name}.png" for name in POINT_FIGURES)
    for link in links:  # relative to report.html, and each a PNG
        assert not link.startswith("/")
        assert (out / link).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", link


def test_report_through_the_cli(quick_run, tmp_path):
    r = run_cli("report", str(quick_run), "--out", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r" / "report.html").exists()


def test_report_names_a_bad_folder(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    r = run_cli("report", str(bad), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    assert str(bad) in r.stderr and "neither a run folder" in r.stderr
    assert not (tmp_path / "out").exists()  # nothing is written for a bad input


def test_trace_plot(tmp_path):
    out = tmp_path / "lanl.png"
    r = run_cli("report", "trace-plot", str(ROOT / "traces/data/lanl-64nodes.csv"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
