package main

import (
	"bufio"
	"context"
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

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// events prints the health events and cost findings the collector wrote as
// JSON lines (the cloudwatch_emf exporter's file output), one readable line
// each. With -follow it keeps reading as the file grows, like tail -F.
func events(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	fs.SetOutput(stderr)
	follow := fs.Bool("follow", false, "keep reading as the file grows (waits for it to appear)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: accelsim events [-follow] FILE.jsonl")
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := printEvents(ctx, fs.Arg(0), *follow, stdout); err != nil {
		fmt.Fprintf(stderr, "accelsim events: %v\n", err)
		return exitError
	}
	return exitOK
}

func printEvents(ctx context.Context, path string, follow bool, out io.Writer) error {
	var offset int64
	var partial []byte
	for {
		f, err := os.Open(path)
		switch {
		case errors.Is(err, os.ErrNotExist) && follow:
		case err != nil:
			return err
		default:
			if info, err := f.Stat(); err == nil && info.Size() < offset {
				offset, partial = 0, nil // truncated or replaced: start over
			}
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				f.Close()
				return err
			}
			r := bufio.NewReaderSize(f, 64<<10)
			for {
				line, err := r.ReadBytes('\n')
				offset += int64(len(line))
				if err != nil {
					partial = append(partial, line...) // a line still being written
					break
				}
				line = append(partial, line...)
				partial = nil
				if s := formatEvent(line); s != "" {
					fmt.Fprintln(out, s)
				}
			}
			f.Close()
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// formatEvent turns one exported log event into a line a person can read;
// events that are neither findings nor health events print nothing.
func formatEvent(line []byte) string {
	var ev map[string]any
	if err := json.Unmarshal(line, &ev); err != nil {
		return ""
	}
	str := func(k string) string {
		if v, ok := ev[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	name := str("event.name")
	where := strings.TrimSpace(str("k8s.node.name") + " " + str("hw.id"))
	if p := str("accelerator.partition.id"); p != "" && str("accelerator.partition.type") != "none" {
		where = strings.TrimSpace(where + " [" + str("accelerator.partition.type") + " " + p + "]")
	}
	who := str("accelerator.workload.name")
	if ns := str("k8s.namespace.name"); ns != "" && who != "" {
		who = ns + "/" + who
	}
	if team := str("accelerator.team"); team != "" {
		who = strings.TrimSpace(who + " (team " + team + ")")
	}
	switch {
	case name == "accelerator.finding":
		saving := ""
		if v, ok := ev["accelerator.finding.monthly_saving"].(float64); ok {
			saving = fmt.Sprintf(" — saves ~$%.0f/month", v)
		}
		target := ""
		if t := str("accelerator.finding.target"); t != "" {
			target = " → " + t
		}
		if where == "" && str("accelerator.finding.nodes") != "" {
			// An endpoint served from several nodes.
			where = accelschema.NodesPhrase(strings.Split(str("accelerator.finding.nodes"), ","))
		}
		if where != "" {
			where = " on " + where
		}
		evidence := ""
		if e := str("accelerator.finding.evidence"); e != "" {
			evidence = "  [" + e + "]"
		}
		return fmt.Sprintf("FINDING %-24s %s%s: %s%s%s%s",
			str("accelerator.finding.kind"), orDash(who), where, firstNonEmpty(str("accelerator.finding.action"), str("body"), "-"), target, saving, evidence)
	case strings.HasPrefix(name, "accelerator.health."):
		xid := ""
		if v := str("accelerator.xid"); v != "" {
			xid = " XID " + v
		}
		where = strings.TrimSpace(where + " " + pciIfNoDevice(str("hw.id"), str("accelerator.pci.bus_id")))
		from := ""
		if v := str("accelerator.health.sources"); v != "" {
			from = "  [from " + strings.ReplaceAll(v, ",", "+") + "]"
		}
		return fmt.Sprintf("HEALTH  %-24s %s%s: %s → %s (%s)%s",
			strings.TrimPrefix(name, "accelerator.health."), where, xid, str("hw.state"), str("accelerator.health.action"), firstNonEmpty(str("accelerator.health.description"), str("body")), from)
	}
	return ""
}

// pciIfNoDevice names the bus of an event on a device no source knows.
func pciIfNoDevice(hwID, bus string) string {
	if hwID != "" || bus == "" {
		return ""
	}
	return "PCI " + bus
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
