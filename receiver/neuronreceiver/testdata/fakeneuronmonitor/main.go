// Command fakeneuronmonitor stands in for AWS neuron-monitor in tests: the
// outside world's binary, speaking its protocol. It takes `-c <config.json>`
// first, as neuron-monitor does, checks the config the way neuron-monitor
// would need it, and then prints one report per period on stdout, taken from
// fixture files of real-format reports. Flags after the config select
// failure modes:
//
//	--fixture a.json[,b.json]  reports to print, in order, cycling
//	--interval 20ms            print faster than the config's period
//	--pretty                   print reports indented instead of one per line
//	--malformed-every N        every Nth report is malformed JSON
//	--truncate-every N         every Nth report is cut in half (a torn write)
//	--exit-after N             exit after N reports ...
//	--exit-code C              ... with this status (default 1) ...
//	--crash-mid-report         ... printing half a report first
//	--stderr TEXT              print TEXT on stderr at start
//	--ignore-sigterm           keep running on SIGTERM
//	--record-config PATH       copy the config and the arguments to PATH
//	--pidfile PATH             write the pid to PATH
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type config struct {
	Period         string `json:"period"`
	NeuronRuntimes []struct {
		TagFilter string `json:"tag_filter"`
		Metrics   []struct {
			Type string `json:"type"`
		} `json:"metrics"`
	} `json:"neuron_runtimes"`
	SystemMetrics []struct {
		Type string `json:"type"`
	} `json:"system_metrics"`
}

func main() {
	os.Exit(run())
}

func run() int {
	if len(os.Args) < 3 || (os.Args[1] != "-c" && os.Args[1] != "--config-file") {
		fmt.Fprintln(os.Stderr, "neuron-monitor: usage: neuron-monitor -c <config file> [--verbose N]")
		return 2
	}
	cfgPath := os.Args[2]
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	fixtures := fs.String("fixture", "", "")
	interval := fs.Duration("interval", 0, "")
	pretty := fs.Bool("pretty", false, "")
	malformedEvery := fs.Int("malformed-every", 0, "")
	truncateEvery := fs.Int("truncate-every", 0, "")
	exitAfter := fs.Int("exit-after", 0, "")
	exitCode := fs.Int("exit-code", 1, "")
	crashMid := fs.Bool("crash-mid-report", false, "")
	stderr := fs.String("stderr", "", "")
	ignoreTerm := fs.Bool("ignore-sigterm", false, "")
	record := fs.String("record-config", "", "")
	pidfile := fs.String("pidfile", "", "")
	if err := fs.Parse(os.Args[3:]); err != nil {
		return 2
	}

	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "neuron-monitor: cannot read config: %v\n", err)
		return 2
	}
	var cfg config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "neuron-monitor: invalid config: %v\n", err)
		return 2
	}
	period, err := time.ParseDuration(cfg.Period)
	if err != nil || period <= 0 {
		fmt.Fprintf(os.Stderr, "neuron-monitor: invalid period %q\n", cfg.Period)
		return 2
	}
	if len(cfg.NeuronRuntimes) == 0 && len(cfg.SystemMetrics) == 0 {
		fmt.Fprintln(os.Stderr, "neuron-monitor: the config enables no metric group")
		return 2
	}
	if *record != "" {
		rec := fmt.Sprintf("%s\nargs: %s\n", raw, strings.Join(os.Args[1:], " "))
		if err := os.WriteFile(*record, []byte(rec), 0o600); err != nil {
			return 2
		}
	}
	if *pidfile != "" {
		if err := os.WriteFile(*pidfile, []byte(fmt.Sprint(os.Getpid())), 0o600); err != nil {
			return 2
		}
	}
	if *stderr != "" {
		fmt.Fprintln(os.Stderr, *stderr)
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}

	var reports [][]byte
	for _, f := range strings.Split(*fixtures, ",") {
		docs, err := readReports(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "neuron-monitor: fixture %s: %v\n", f, err)
			return 2
		}
		reports = append(reports, docs...)
	}
	if len(reports) == 0 {
		fmt.Fprintln(os.Stderr, "neuron-monitor: no fixture reports")
		return 2
	}
	if *interval > 0 {
		period = *interval
	}

	for n := 1; ; n++ {
		doc := reports[(n-1)%len(reports)]
		if *pretty {
			var buf bytes.Buffer
			_ = json.Indent(&buf, doc, "", "  ")
			doc = buf.Bytes()
		}
		switch {
		case *exitAfter > 0 && n > *exitAfter:
			if *crashMid {
				os.Stdout.Write(doc[:len(doc)/2])
			}
			return *exitCode
		case *malformedEvery > 0 && n%*malformedEvery == 0:
			// A value neuron-monitor's serializer would never print.
			os.Stdout.Write(bytes.Replace(doc, []byte(`"pid":`), []byte(`"pid":oops,"x":`), 1))
			os.Stdout.Write([]byte("\n"))
		case *truncateEvery > 0 && n%*truncateEvery == 0:
			os.Stdout.Write(doc[:len(doc)/2])
			os.Stdout.Write([]byte("\n"))
		default:
			os.Stdout.Write(doc)
			os.Stdout.Write([]byte("\n"))
		}
		time.Sleep(period)
	}
}

// readReports returns the compact form of each JSON document in a fixture.
func readReports(path string) ([][]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out [][]byte
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, doc); err != nil {
			return nil, err
		}
		out = append(out, buf.Bytes())
	}
}
