from conftest import ROOT, run_cli
from omnilearn_analysis.report import write_report


def test_report_for_a_run_and_a_sweep(quick_run, quick_sweep, tmp_path):
    html_path = write_report([str(quick_run), str(quick_sweep)], str(tmp_path / "report"))
    page = html_path.read_text()
    assert page.count("data:image/png;base64,") >= 4
    assert "Policies compared" in page and "vs_uniform_pct" in page
    pngs = sorted(p.name for p in (tmp_path / "report").glob("*.png"))
    assert any(name.endswith("batch.png") for name in pngs)
    assert any(name.endswith("bars.png") for name in pngs)


def test_report_through_the_cli(quick_run, tmp_path):
    r = run_cli("report", str(quick_run), "--out", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r" / "report.html").exists()


def test_report_names_a_bad_folder(tmp_path):
    r = run_cli("report", str(tmp_path))
    assert r.returncode == 1
    assert str(tmp_path) in r.stderr and "neither a run folder" in r.stderr


def test_trace_plot(tmp_path):
    out = tmp_path / "lanl.png"
    r = run_cli("report", "trace-plot", str(ROOT / "traces/data/lanl-64nodes.csv"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
