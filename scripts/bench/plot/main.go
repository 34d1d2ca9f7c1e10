// Command plot draws the charts of BENCHMARKS.md as SVG files from the raw
// output of the benchmark scripts, the same files scripts/bench/summary.sh
// turns into the tables, so that tables and charts come from one run:
//
//	go run ./scripts/bench/plot -in /tmp/bench -out docs/bench
//
// It reads IN/inprocess/{gin,fiber,nethttp}.r<N>.txt and
// IN/redis/redis.r<N>.txt (with the machine.txt each script writes) and
// writes three charts, each stating the machine, the date and the
// commands that made it:
//
//   - frameworks.svg: requests/s of the library against the bare handler
//     of each framework, list of 100 items and update (in-process);
//   - list-items.svg: list time against the number of items, memstore
//     (cached) and Redis (uncached), both axes logarithmic;
//   - redis-update.svg: update throughput with 32 callers on one hot pet
//     against distinct pets (api, store, raw go-redis loop);
//   - million.svg, when IN/million/million.tsv is there (written by
//     scripts/bench/million.sh, with its machine.txt): list time,
//     unchanged and after one update, the longest Redis command, and
//     update p99 while lists run, for the project and the yardstick,
//     against the number of pets, log–log;
//   - wire.svg, from the same table's gzip and conditional columns: req/s
//     of lists accepting gzip and of conditional lists, the project's
//     against the yardstick's and bare Gin behind gin-contrib/gzip.
//
// Every value is the median over the rounds, as in summary.sh. The
// plotting library lives in this module of its own, so that no user of
// petinventory downloads it. `go generate work` draws the committed charts
// again from the committed data (docs/bench/data), as its directive here
// says.
package main

//go:generate go run . -in ../../../docs/bench/data -out ../../../docs/bench

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "plot: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "directory the benchmark scripts wrote (the argument OUT of scripts/bench/*.sh)")
	out := fs.String("out", "docs/bench", "directory to write the SVG files to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || fs.NArg() > 0 {
		return errors.New("usage: plot -in DIR [-out DIR]")
	}
	data, err := load(*in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, c := range charts {
		path := filepath.Join(*out, c.file)
		if c.optional && !c.has(data) {
			fmt.Fprintf(stderr, "skipped %s: %s\n", path, c.missing)
			continue
		}
		if err := c.draw(data, path); err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", path)
	}
	return nil
}

// charts are the figures, in the order BENCHMARKS.md shows them.
var charts = []struct {
	file string
	draw func(*results, string) error
	// An optional chart is drawn only when has says its input is there;
	// missing says what to run otherwise.
	optional bool
	has      func(*results) bool
	missing  string
}{
	{file: "frameworks.svg", draw: drawFrameworks},
	{file: "list-items.svg", draw: drawListItems},
	{file: "redis-update.svg", draw: drawRedisUpdate},
	{file: "million.svg", draw: drawMillion, optional: true,
		has:     func(r *results) bool { return r.million != nil },
		missing: "no million/million.tsv (run scripts/bench/million.sh)"},
	{file: "wire.svg", draw: drawWire, optional: true, has: hasWire,
		missing: "no gzip columns in million/million.tsv (run scripts/bench/million.sh)"},
}

// results are the ns/op of every benchmark of one run, per round, and
// what each script said about the machine.
type results struct {
	// inprocess[module][benchmark][side]: "gin", "List/items=100", "lib".
	inprocess map[string]map[string]map[string][]float64
	// redis[kind][group][side]: "Update", "hot", "api".
	redis                    map[string]map[string]map[string][]float64
	inprocessInfo, redisInfo machineInfo
	// million is million.sh's table, one row per size; nil without one.
	million     []map[string]string
	millionInfo machineInfo
}

// machineInfo is what a script's machine.txt says.
type machineInfo struct {
	date, command, cpu, memory, goVersion, commit string
}

var roundRE = regexp.MustCompile(`\.r([0-9]+)\.txt$`)

// load reads the raw output under dir.
func load(dir string) (*results, error) {
	r := &results{
		inprocess: map[string]map[string]map[string][]float64{},
		redis:     map[string]map[string]map[string][]float64{},
	}
	files, _ := filepath.Glob(filepath.Join(dir, "inprocess", "*.r*.txt"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no in-process results in %s (run scripts/bench/inprocess.sh %s)", filepath.Join(dir, "inprocess"), dir)
	}
	for _, f := range files {
		if !roundRE.MatchString(f) {
			continue
		}
		module := strings.SplitN(filepath.Base(f), ".", 2)[0]
		err := readBench(f, func(name string, nsop float64) {
			// List/lib/items=100 or Update/lib
			p := strings.Split(name, "/")
			if len(p) < 2 {
				return
			}
			bench := p[0]
			if len(p) > 2 {
				bench += "/" + p[2]
			}
			add(r.inprocess, module, bench, p[1], nsop)
		})
		if err != nil {
			return nil, err
		}
	}
	files, _ = filepath.Glob(filepath.Join(dir, "redis", "redis.r*.txt"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no Redis results in %s (run scripts/bench/redis.sh %s)", filepath.Join(dir, "redis"), dir)
	}
	for _, f := range files {
		err := readBench(f, func(name string, nsop float64) {
			// Update/redis-server/hot/api or List/redis-server/items=100/raw
			p := strings.Split(name, "/")
			if len(p) != 4 || p[1] != "redis-server" {
				return
			}
			add(r.redis, p[0], p[2], p[3], nsop)
		})
		if err != nil {
			return nil, err
		}
	}
	var err error
	if r.inprocessInfo, err = readMachine(filepath.Join(dir, "inprocess", "machine.txt")); err != nil {
		return nil, err
	}
	if r.redisInfo, err = readMachine(filepath.Join(dir, "redis", "machine.txt")); err != nil {
		return nil, err
	}
	tsv := filepath.Join(dir, "million", "million.tsv")
	if _, err := os.Stat(tsv); err == nil {
		if r.million, err = readTSV(tsv); err != nil {
			return nil, err
		}
		if r.millionInfo, err = readMachine(filepath.Join(dir, "million", "machine.txt")); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func add(m map[string]map[string]map[string][]float64, a, b, c string, v float64) {
	if m[a] == nil {
		m[a] = map[string]map[string][]float64{}
	}
	if m[a][b] == nil {
		m[a][b] = map[string][]float64{}
	}
	m[a][b][c] = append(m[a][b][c], v)
}

// readBench calls f with the name (without "Benchmark" and the -N
// suffix) and ns/op of every benchmark line of a go test output file.
func readBench(path string, f func(name string, nsop float64)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		found := false
		for i := 2; i+1 < len(fields); i += 2 {
			if fields[i+1] == "ns/op" {
				v, err := strconv.ParseFloat(fields[i], 64)
				if err != nil || v <= 0 {
					return fmt.Errorf("%s:%d: ns/op %q is not a positive number", path, line, fields[i])
				}
				f(name, v)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s:%d: a benchmark line without ns/op: %s", path, line, sc.Text())
		}
	}
	return sc.Err()
}

// readMachine reads the "# …" lines of a machine.txt.
func readMachine(path string) (machineInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return machineInfo{}, fmt.Errorf("%v (each chart says where its figures come from; the scripts write this file)", err)
	}
	var m machineInfo
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(line, "# ")
		switch {
		case strings.HasPrefix(line, "date "):
			m.date = strings.TrimPrefix(line, "date ")
		case strings.HasPrefix(line, "command "):
			m.command = strings.TrimPrefix(line, "command ")
		case strings.Contains(line, " CPUs: "):
			m.cpu = line
		case strings.Contains(line, " RAM"):
			m.memory = line
		case strings.HasPrefix(line, "go version "):
			m.goVersion = strings.Fields(line)[2]
		case strings.HasPrefix(line, "commit "):
			m.commit = strings.TrimPrefix(line, "commit ")
		}
	}
	if m.date == "" || m.command == "" || m.cpu == "" {
		return m, fmt.Errorf("%s lacks the date, the command or the CPU line (written by scripts/bench/common.sh's machine)", path)
	}
	return m, nil
}

// footer is what every chart says under it: the machine, the date and
// the commands.
func footer(infos ...machineInfo) []string {
	m := infos[0]
	lines := []string{
		fmt.Sprintf("Machine: %s; %s; %s", m.cpu, m.memory, m.goVersion),
		fmt.Sprintf("Date: %s, commit %s", m.date, m.commit),
	}
	for _, i := range infos {
		lines = append(lines, "Command: "+i.command)
	}
	return append(lines, "Plotted by: go run ./scripts/bench/plot -in docs/bench/data -out docs/bench (medians over the rounds, from the files the tables of BENCHMARKS.md come from)")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// get is the median ns/op of one benchmark, or an error naming it.
func get(m map[string]map[string]map[string][]float64, a, b, c string) (float64, error) {
	v := m[a][b][c]
	if len(v) == 0 {
		return 0, fmt.Errorf("no result for %s %s %s", a, b, c)
	}
	return median(v), nil
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x5f, B: 0xb4, A: 0xff}, // library: blue
	color.RGBA{R: 0x9a, G: 0x9a, B: 0x9a, A: 0xff}, // baseline: grey
	color.RGBA{R: 0xd0, G: 0x7b, B: 0x00, A: 0xff}, // orange
	color.RGBA{R: 0x2e, G: 0x8b, B: 0x57, A: 0xff}, // green
	color.RGBA{R: 0xb3, G: 0x26, B: 0x1e, A: 0xff}, // red
	color.RGBA{R: 0x6a, G: 0x3d, B: 0x9a, A: 0xff}, // purple
}

func newPlot(title, ylabel string) *plot.Plot {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 13
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	return p
}

// bars adds one bar series per name over the groups; vals[i][j] is the
// value of series i in group j.
func bars(p *plot.Plot, names []string, groups []string, vals [][]float64) error {
	w := vg.Points(84 / float64(len(names)))
	for i, name := range names {
		bc, err := plotter.NewBarChart(plotter.Values(vals[i]), w)
		if err != nil {
			return err
		}
		bc.Color = palette[i%len(palette)]
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-float64(len(names)-1)/2) * w
		p.Add(bc)
		p.Legend.Add(name, bc)
	}
	p.NominalX(groups...)
	p.Add(plotter.NewGrid())
	// Room above the tallest bar for the legend.
	top := 0.0
	for _, v := range vals {
		top = max(top, slices.Max(v))
	}
	p.Y.Min, p.Y.Max = 0, top*1.3
	p.X.Min, p.X.Max = -0.7, float64(len(groups))-0.3
	p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		ticks := plot.DefaultTicks{}.Ticks(min, max)
		for i := range ticks {
			if ticks[i].Label != "" {
				ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
			}
		}
		return ticks
	})
	return nil
}

var frameworks = []struct{ module, label string }{{"gin", "gin"}, {"fiber", "fiber"}, {"nethttp", "net/http"}}

func drawFrameworks(r *results, path string) error {
	sides := []string{"lib", "bare", "bare+sha256"}
	names := []string{"library", "bare handler", "bare + SHA-256 key check"}
	var groups []string
	vals := make([][]float64, len(sides))
	for _, fw := range frameworks {
		for _, op := range []struct{ bench, label string }{{"List/items=100", "list (100 items)"}, {"Update", "update"}} {
			groups = append(groups, fw.label+"\n"+op.label)
			for i, side := range sides {
				ns, err := get(r.inprocess, fw.module, op.bench, side)
				if err != nil {
					return err
				}
				vals[i] = append(vals[i], 1e9/ns/1000)
			}
		}
	}
	p := newPlot("In-process requests/s: the library vs a bare handler of each framework (memstore, one goroutine)", "thousand requests/s (higher is better)")
	if err := bars(p, names, groups, vals); err != nil {
		return err
	}
	return save(p, path, footer(r.inprocessInfo))
}

func drawListItems(r *results, path string) error {
	items := []int{10, 100, 10000}
	p := newPlot("List time vs number of items, log–log: memstore (cached) and Redis (uncached)", "time per list, µs (lower is better)")
	p.X.Label.Text = "items in the inventory"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Left = true
	type series struct {
		label string
		ns    func(n int) (float64, error)
	}
	var all []series
	for _, fw := range frameworks {
		all = append(all, series{fw.label + ", memstore (cached encoding)", func(n int) (float64, error) {
			return get(r.inprocess, fw.module, fmt.Sprintf("List/items=%d", n), "lib")
		}})
	}
	for _, s := range []struct{ side, label string }{{"api", "Redis: API (uncached)"}, {"store", "Redis: Store.List"}, {"raw", "Redis: raw HGETALLs"}} {
		all = append(all, series{s.label, func(n int) (float64, error) {
			return get(r.redis, "List", fmt.Sprintf("items=%d", n), s.side)
		}})
	}
	for i, s := range all {
		xys := make(plotter.XYs, len(items))
		for j, n := range items {
			ns, err := s.ns(n)
			if err != nil {
				return err
			}
			xys[j] = plotter.XY{X: float64(n), Y: ns / 1000}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		if i >= len(frameworks) {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(s.label, line, points)
	}
	p.Add(plotter.NewGrid())
	p.X.Min, p.X.Max = 5, 20000
	// Two decades of room above the slowest list for the legend.
	p.Y.Max *= 100
	return save(p, path, footer(r.inprocessInfo, r.redisInfo))
}

func drawRedisUpdate(r *results, path string) error {
	sides := []struct{ side, label string }{{"api", "API over the store"}, {"store", "Store.SetQuantity"}, {"raw", "raw go-redis WATCH/MULTI loop"}}
	var groups []string
	for _, s := range sides {
		groups = append(groups, s.label)
	}
	names := []string{"distinct pets (one per caller)", "one hot pet (all 32 callers)"}
	vals := make([][]float64, len(names))
	for i, g := range []string{"distinct", "hot"} {
		for _, s := range sides {
			ns, err := get(r.redis, "Update", g, s.side)
			if err != nil {
				return err
			}
			vals[i] = append(vals[i], 1e9/ns/1000)
		}
	}
	p := newPlot("Redis update throughput, 32 concurrent callers: one hot pet vs distinct pets", "thousand updates/s (higher is better)")
	if err := bars(p, names, groups, vals); err != nil {
		return err
	}
	return save(p, path, footer(r.redisInfo))
}

// readTSV reads a table with a header line into one map per row.
func readTSV(path string) ([]map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	header := strings.Split(lines[0], "\t")
	var rows []map[string]string
	for i, line := range lines[1:] {
		fields := strings.Split(line, "\t")
		if len(fields) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header names %d", path, i+2, len(fields), len(header))
		}
		row := map[string]string{}
		for j, h := range header {
			row[h] = fields[j]
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no row under the header", path)
	}
	return rows, nil
}

func drawMillion(r *results, path string) error {
	p := newPlot("A million pets: list time, the longest Redis command and update p99 vs pets, log–log", "milliseconds (lower is better)")
	err := addPetSeries(p, r.million, []petSeries{
		{"list_ms", "list, unchanged (median of 5)", false},
		{"after_update_ms", "first list after one update", false},
		{"slowest_ms", "longest Redis command of the run (SLOWLOG)", false},
		{"upd_lists_p99_ms", "update p99 while 4 clients list once a second", false},
		{"ys_lists_p99_ms", "yardstick: update p99, same load", true},
	})
	if err != nil {
		return err
	}
	// Two decades of room above the slowest figure for the legend.
	p.Y.Max *= 100
	return save(p, path, footer(r.millionInfo))
}

// drawWire draws the list on the wire from million.sh's gzip and
// conditional columns: req/s of lists accepting gzip and of conditional
// lists, the project's against the yardstick's (one Redis round trip,
// then bytes from memory) and bare Gin behind gin-contrib/gzip.
func drawWire(r *results, path string) error {
	p := newPlot("The list on the wire: req/s of gzip and conditional lists vs pets, log–log", "requests/s (higher is better)")
	err := addPetSeries(p, r.million, []petSeries{
		{"gz_rps", "gzip list (precompressed segments)", false},
		{"ys_gz_rps", "yardstick: round trip, then gzip bytes from memory", true},
		{"bare_gz_rps", "bare Gin behind gin-contrib/gzip", false},
		{"cond_rps", "conditional list (304)", false},
		{"ys_cond_rps", "yardstick: round trip, then 304", true},
	})
	if err != nil {
		return err
	}
	p.Y.Max *= 100
	return save(p, path, footer(r.millionInfo))
}

// hasWire reports whether million.tsv has the columns drawWire needs
// (million.sh writes them since the gzip list).
func hasWire(r *results) bool {
	return r.million != nil && r.million[0]["gz_rps"] != ""
}

// petSeries is one line of a chart against the number of pets: a
// million.tsv column, its legend, and whether it is a baseline (dashed).
type petSeries struct {
	column, label string
	baseline      bool
}

// addPetSeries adds a line per series over rows to p, on log–log axes
// of pets; a size whose value is not positive (not measured) is left out.
func addPetSeries(p *plot.Plot, rows []map[string]string, series []petSeries) error {
	p.X.Label.Text = "pets in the inventory"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Left = true
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		var xys plotter.XYs
		for j, row := range rows {
			n, err := strconv.ParseFloat(row["pets"], 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("million.tsv row %d: pets %q is not a positive number", j+1, row["pets"])
			}
			v, err := strconv.ParseFloat(row[s.column], 64)
			if err != nil || math.IsNaN(v) || v <= 0 {
				continue // not measured at that size (no 200 answer)
			}
			xys = append(xys, plotter.XY{X: n, Y: v})
			lo, hi = min(lo, n), max(hi, n)
		}
		if len(xys) == 0 {
			return fmt.Errorf("million.tsv: no value of %s", s.column)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		if s.baseline {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(s.label, line, points)
	}
	p.Add(plotter.NewGrid())
	p.X.Min, p.X.Max = lo/2, hi*2
	return nil
}

// save draws p with the footer lines under it into an SVG file.
func save(p *plot.Plot, path string, lines []string) error {
	const width, height = 9 * vg.Inch, 5 * vg.Inch
	lineHeight := vg.Points(11)
	foot := lineHeight*vg.Length(len(lines)) + vg.Points(8)
	canvas := vgsvg.New(width, height+foot)
	dc := draw.New(canvas)
	p.Draw(draw.Crop(dc, 0, 0, foot, 0))
	sty := draw.TextStyle{
		Color:   color.Gray{Y: 0x40},
		Font:    font.From(plot.DefaultFont, vg.Points(7.5)),
		Handler: plot.DefaultTextHandler,
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
	}
	for i, line := range lines {
		dc.FillText(sty, vg.Point{X: vg.Points(6), Y: foot - lineHeight*vg.Length(i+1)}, line)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
