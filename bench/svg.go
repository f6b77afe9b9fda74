package bench

import (
	"bufio"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/optval"
)

// SVG geometry, in pixels.
const (
	svgPlotWidth  = 760.0
	svgMarginL    = 80.0
	svgMarginR    = 250.0
	svgMarginT    = 70.0
	svgMarginB    = 60.0
	svgMaxWindows = 25
)

// svgMapper maps table coordinates into the plot (y up).
type svgMapper struct {
	view         spatial.Bound
	plotW, plotH float64
}

func (m svgMapper) x(v float64) float64 {
	return svgMarginL + (v-m.view.MinX)/m.view.Width()*m.plotW
}

func (m svgMapper) y(v float64) float64 {
	return svgMarginT + (m.view.MaxY-v)/m.view.Height()*m.plotH
}

// rect returns b's rectangle in pixels, clamped to a little outside the
// plot (for boxes without statistics) and at least half a pixel wide so
// that point-like files still show.
func (m svgMapper) rect(b spatial.Bound) (x, y, w, h float64) {
	clampX := func(v float64) float64 { return math.Max(svgMarginL-5, math.Min(svgMarginL+m.plotW+5, v)) }
	clampY := func(v float64) float64 { return math.Max(svgMarginT-5, math.Min(svgMarginT+m.plotH+5, v)) }
	x0, x1 := clampX(m.x(b.MinX)), clampX(m.x(b.MaxX))
	y0, y1 := clampY(m.y(b.MaxY)), clampY(m.y(b.MinY))
	return x0, y0, math.Max(x1-x0, 0.5), math.Max(y1-y0, 0.5)
}

// WriteSVG draws one layout as an SVG picture: the data extent, every
// file's bbox from its statistics as a rectangle (one colour per file, in
// file order), a sample of the windows as dashed rectangles, axes with
// labelled ticks, a legend, and a title with the layout's figures. It is
// written by hand so that it has no dependencies and stays diffable.
func WriteSVG(w io.Writer, rep *Report, lr *LayoutReport) error {
	view := rep.Extent
	if view.IsEmpty() || view.Width() == 0 || view.Height() == 0 {
		view = view.Extend(spatial.Bound{MinX: view.MinX - 0.5, MinY: view.MinY - 0.5, MaxX: view.MaxX + 0.5, MaxY: view.MaxY + 0.5})
	}
	if view.IsEmpty() {
		view = spatial.Bound{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}
	}
	padX, padY := view.Width()*0.02, view.Height()*0.02
	view = spatial.Bound{MinX: view.MinX - padX, MinY: view.MinY - padY, MaxX: view.MaxX + padX, MaxY: view.MaxY + padY}
	m := svgMapper{view: view, plotW: svgPlotWidth}
	m.plotH = math.Max(280, math.Min(760, svgPlotWidth*view.Height()/view.Width()))
	width, height := svgMarginL+m.plotW+svgMarginR, svgMarginT+m.plotH+svgMarginB

	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	p(`<rect x="0" y="0" width="%.0f" height="%.0f" fill="white"/>`+"\n", width, height)
	p(`<text x="%.0f" y="26" font-size="17" font-weight="bold">%s</text>`+"\n", svgMarginL, esc(svgTitle(rep, lr)))
	p(`<text x="%.0f" y="46" fill="#444">%s</text>`+"\n", svgMarginL, esc(svgSubtitle(rep, lr)))
	p(`<defs><clipPath id="plot"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"/></clipPath></defs>`+"\n",
		svgMarginL, svgMarginT, m.plotW, m.plotH)
	p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#888"/>`+"\n", svgMarginL, svgMarginT, m.plotW, m.plotH)
	writeAxes(p, m)

	p(`<g clip-path="url(#plot)">` + "\n")
	ex, ey, ew, eh := m.rect(rep.Extent)
	p(`<rect class="extent" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="none" stroke="#999" stroke-width="1"/>`+"\n", ex, ey, ew, eh)
	// The row sample is one path of small squares: a tenth of the bytes
	// of one circle per row.
	p(`<path class="rows" fill="#555" d="`)
	for _, r := range rep.RowSample {
		if cx, cy := r.Center(); !r.IsEmpty() {
			p("M%.1f %.1fh1.6v1.6h-1.6z", m.x(cx)-0.8, m.y(cy)-0.8)
		}
	}
	p(`"/>` + "\n")
	// Fills fade with the overlap, so that where the most files overlap
	// the picture is about half covered; larger files are drawn first so
	// that small ones stay visible.
	alpha := fillAlpha(lr.MaxOverlapDepth)
	for _, i := range drawOrder(lr.FileBounds) {
		b := lr.FileBounds[i]
		x, y, fw, fh := m.rect(b)
		col := fileColour(i)
		p(`<rect class="file" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s" fill-opacity="%.3f" stroke="%s" stroke-width="1.2"><title>file %d: %s</title></rect>`+"\n",
			x, y, fw, fh, col, alpha, col, i, esc(formatBoundText(b)))
	}
	for _, win := range sampleWindows(rep.WindowList, svgMaxWindows) {
		x, y, ww, wh := m.rect(win)
		p(`<rect class="window" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="none" stroke="black" stroke-width="1.5" stroke-dasharray="4 3"/>`+"\n", x, y, ww, wh)
	}
	p("</g>\n")
	writeLegend(p, rep, lr, svgMarginL+m.plotW+20)
	p("</svg>\n")
	return bw.Flush()
}

func svgTitle(rep *Report, lr *LayoutReport) string {
	ratio := "n/a"
	if lr.RatioToLowerBound != nil {
		ratio = fmt.Sprintf("%.2f×", *lr.RatioToLowerBound)
	}
	return fmt.Sprintf("%s — %d files, %.1f files planned per window, %s the lower bound", lr.Layout, lr.Files, lr.MeanFilesPlanned, ratio)
}

func svgSubtitle(rep *Report, lr *LayoutReport) string {
	s := fmt.Sprintf("%s: %d rows, %d windows", rep.Table, rep.Rows, rep.Windows)
	if rep.WindowArea > 0 {
		s += fmt.Sprintf(" of %.3g%% of the extent (%s placement, seed %d)", rep.WindowArea*100, rep.Placement, rep.Seed)
	}
	return s
}

// writeAxes draws ticks and labels on the bottom and left edges.
func writeAxes(p func(string, ...any), m svgMapper) {
	bottom := svgMarginT + m.plotH
	for _, v := range niceTicks(m.view.MinX, m.view.MaxX, 8) {
		x := m.x(v)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, x, bottom, x, bottom+5)
		p(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, bottom+18, tickLabel(v))
	}
	for _, v := range niceTicks(m.view.MinY, m.view.MaxY, 6) {
		y := m.y(v)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, svgMarginL-5, y, svgMarginL, y)
		p(`<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", svgMarginL-8, y+4, tickLabel(v))
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">x</text>`+"\n", svgMarginL+m.plotW/2, bottom+40)
	p(`<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">y</text>`+"\n",
		svgMarginL-50, svgMarginT+m.plotH/2, svgMarginL-50, svgMarginT+m.plotH/2)
}

// writeLegend explains the marks and lists the layout's figures.
func writeLegend(p func(string, ...any), rep *Report, lr *LayoutReport, x float64) {
	y := svgMarginT + 10
	shown := min(len(rep.WindowList), svgMaxWindows)
	p(`<rect x="%.1f" y="%.1f" width="22" height="14" fill="%s" fill-opacity="0.2" stroke="%s" stroke-width="1.2"/>`, x, y, fileColour(0), fileColour(0))
	p(`<text x="%.1f" y="%.1f">file bbox (%d; a colour each)</text>`+"\n", x+30, y+11, lr.Files)
	y += 24
	p(`<rect x="%.1f" y="%.1f" width="22" height="14" fill="none" stroke="black" stroke-width="1.5" stroke-dasharray="4 3"/>`, x, y)
	p(`<text x="%.1f" y="%.1f">query window (%d of %d)</text>`+"\n", x+30, y+11, shown, rep.Windows)
	y += 24
	p(`<rect x="%.1f" y="%.1f" width="22" height="14" fill="none" stroke="#999"/>`, x, y)
	p(`<text x="%.1f" y="%.1f">data extent</text>`+"\n", x+30, y+11)
	y += 24
	p(`<circle cx="%.1f" cy="%.1f" r="2" fill="#555"/>`, x+11, y+7)
	p(`<text x="%.1f" y="%.1f">rows (sample of %d)</text>`+"\n", x+30, y+11, len(rep.RowSample))
	y += 40
	ratio := "n/a"
	if lr.RatioToLowerBound != nil {
		ratio = fmt.Sprintf("%.2f", *lr.RatioToLowerBound)
	}
	lines := []string{
		"files planned per window",
		fmt.Sprintf("  mean %.2f, median %.1f, p95 %.0f", lr.MeanFilesPlanned, lr.MedianFilesPlanned, lr.P95FilesPlanned),
		fmt.Sprintf("  with a matching row: %.2f", lr.MeanFilesWithMatches),
		fmt.Sprintf("  lower bound: %.2f", lr.MeanLowerBound),
		fmt.Sprintf("  ratio to lower bound: %s", ratio),
		"file bbox overlap depth",
		fmt.Sprintf("  mean %.2f, max %d", lr.MeanOverlapDepth, lr.MaxOverlapDepth),
		fmt.Sprintf("target file size %s", optval.FormatBytes(rep.TargetFileSize)),
	}
	for _, l := range lines {
		p(`<text x="%.1f" y="%.1f" xml:space="preserve">%s</text>`+"\n", x, y, esc(l))
		y += 18
	}
}

// fillAlpha is the fill opacity at which depth overlapping fills cover
// about half the background, at most 0.2.
func fillAlpha(depth int) float64 {
	if depth <= 1 {
		return 0.2
	}
	return math.Min(0.2, 1-math.Pow(0.5, 1/float64(depth)))
}

// drawOrder returns file indexes by decreasing bbox area.
func drawOrder(bounds []spatial.Bound) []int {
	idx := make([]int, len(bounds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(bounds[b].Area(), bounds[a].Area()) })
	return idx
}

// fileColour gives file i a colour: hues a golden angle apart, so that
// neighbours in file order are easy to tell apart.
func fileColour(i int) string {
	h := math.Mod(float64(i)*137.508, 360)
	return fmt.Sprintf("hsl(%.0f,75%%,42%%)", h)
}

// sampleWindows returns up to n windows spread evenly over ws.
func sampleWindows(ws []spatial.Bound, n int) []spatial.Bound {
	if len(ws) <= n {
		return ws
	}
	out := make([]spatial.Bound, n)
	for i := range n {
		out[i] = ws[i*len(ws)/n]
	}
	return out
}

// niceTicks returns about n round tick values in [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return nil
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", v), "0"), ".")
}

func formatBoundText(b spatial.Bound) string {
	if math.IsInf(b.MinX, 0) {
		return "no statistics: planned for every window"
	}
	return fmt.Sprintf("%.6g,%.6g,%.6g,%.6g", b.MinX, b.MinY, b.MaxX, b.MaxY)
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// WriteSVGs writes one picture per layout of rep into dir (created if
// missing) as <layout>.svg and returns the paths written.
func WriteSVGs(dir string, rep *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("svg dir: %w", err)
	}
	var paths []string
	for i := range rep.Layouts {
		path := filepath.Join(dir, string(rep.Layouts[i].Layout)+".svg")
		f, err := os.Create(path)
		if err != nil {
			return paths, fmt.Errorf("svg: %w", err)
		}
		err = WriteSVG(f, rep, &rep.Layouts[i])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("svg %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
