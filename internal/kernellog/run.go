package kernellog

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Source reads kernel messages.
type Source interface {
	// Kind names the source in positions and errors: kmsg, journal, file.
	Kind() string
	// Run reads from after from (the whole log when have is false) until
	// ctx is done, handing each line to emit in order. Lines whose text is
	// empty carry only a position (messages that cannot matter, skipped
	// before the backlog). A source that is missing or fails is retried by
	// the source itself; problems go to problem.
	Run(ctx context.Context, from Position, have bool, emit func(Line), problem func(Problem))
}

// Problem is something the reader could not do, for a rate-limited warning:
// Key groups repeats of the same problem.
type Problem struct {
	Key string
	Err error
	// Missing is set while the source cannot be read at all (for the
	// component's status); a later line from it clears it.
	Missing bool
}

// Skip is a line that made no event, with where it was and why.
type Skip struct {
	Where, Reason, Text string
}

// Settings configure Run.
type Settings struct {
	Source     Source
	Checkpoint Checkpoint
	// Backlog bounds the lines waiting for the consumer; past it, lines are
	// dropped and counted. Default 4096.
	Backlog int
	// Quiet is how long the source may be silent before a multi-line event
	// is taken as complete. Default 250ms.
	Quiet time.Duration
	// SaveEvery spaces out checkpoint writes. Default 1s; the position is
	// also saved when Run ends.
	SaveEvery time.Duration
	// Handle receives complete events, in order. It may block: lines keep
	// arriving into the backlog meanwhile.
	Handle func(Event)
	// Problem receives what went wrong; it is called from Run's goroutines.
	Problem func(Problem)
	// Skipped receives each line that carries a driver's marker but makes
	// no event and belongs to none (see the Skip reasons), so that the
	// component counts it and says where it was: no such line is dropped
	// unseen.
	Skipped func(Skip)
	// Recovered is called when a source that was missing gives a line.
	Recovered func()
}

// Run reads the source until ctx is done, then flushes what it holds,
// saves the position and returns.
func Run(ctx context.Context, s Settings) error {
	if s.Checkpoint == nil {
		return errNoCheckpoint
	}
	if s.Backlog <= 0 {
		s.Backlog = 4096
	}
	if s.Quiet <= 0 {
		s.Quiet = 250 * time.Millisecond
	}
	if s.SaveEvery <= 0 {
		s.SaveEvery = time.Second
	}
	if s.Problem == nil {
		s.Problem = func(Problem) {}
	}
	if s.Skipped == nil {
		s.Skipped = func(Skip) {}
	}
	from, have, err := s.Checkpoint.Load(ctx)
	if err != nil {
		s.Problem(Problem{Key: "checkpoint", Err: err})
		have = false
	}
	if have && from.Source != s.Source.Kind() {
		have = false // the receiver was switched to another source
	}

	lines := make(chan Line, s.Backlog)
	var dropped atomic.Int64
	var missing atomic.Bool
	srcCtx, stop := context.WithCancel(ctx)
	srcDone := make(chan struct{})
	go func() {
		defer close(srcDone)
		defer close(lines)
		s.Source.Run(srcCtx, from, have, func(l Line) {
			select {
			case lines <- l:
			default:
				if l.Text != "" {
					dropped.Add(1)
				}
			}
		}, func(p Problem) {
			if p.Missing {
				missing.Store(true)
			}
			s.Problem(p)
		})
	}()

	l := loop{s: s, pos: from, havePos: have}
	quiet := time.NewTimer(s.Quiet)
	defer quiet.Stop()
	lastSave := time.Now()
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			if missing.CompareAndSwap(true, false) && s.Recovered != nil {
				s.Recovered()
			}
			l.take(line)
			if n := dropped.Swap(0); n > 0 {
				s.Problem(Problem{Key: "dropped", Err: fmt.Errorf("%s: %d kernel messages dropped: the backlog of %d was full (the logs pipeline is slower than the kernel log)", s.Source.Kind(), n, s.Backlog)})
			}
			quiet.Reset(s.Quiet)
		case <-quiet.C:
			l.flush()
		case <-ctx.Done():
			stop()
			for line := range lines { // what the source had already sent
				l.take(line)
			}
			open = false
		}
		if time.Since(lastSave) >= s.SaveEvery {
			l.save(context.WithoutCancel(ctx))
			lastSave = time.Now()
		}
	}
	stop()
	<-srcDone
	l.flush()
	l.save(context.WithoutCancel(ctx))
	return nil
}

// loop is Run's state: the assembler and the positions.
type loop struct {
	s   Settings
	asm assembler
	// pos is the position after the last line taken; safe is the one
	// before the pending event's first line: what may be saved while that
	// event has not been handed on.
	pos, safe, saved Position
	havePos          bool
}

func (l *loop) take(line Line) {
	prev := l.pos
	l.pos, l.havePos = line.Pos, true
	if line.Text == "" {
		if l.asm.pending == nil {
			l.safe = line.Pos
		}
		return
	}
	m, err := Parse(line.Text)
	if err != nil {
		// A line that starts like an XID but cannot be read is still the
		// driver reporting something: an event of unknown form, never lost.
		l.s.Problem(Problem{Key: "parse", Err: fmt.Errorf("%s: %w; kept as an event of unknown form", line.Where, err)})
		m = unknown(line.Text)
	}
	before := l.asm.pending
	ev, skipped := l.asm.add(m, line)
	if ev != nil {
		l.s.Handle(*ev)
	}
	if skipped != "" {
		l.s.Skipped(Skip{Where: line.Where, Reason: skipped, Text: line.Text})
	}
	switch {
	case l.asm.pending == nil:
		l.safe = line.Pos
	case l.asm.pending != before:
		l.safe = prev // an event starts with this line
	}
}

func (l *loop) flush() {
	if ev := l.asm.flush(); ev != nil {
		l.s.Handle(*ev)
	}
	l.safe = l.pos
}

func (l *loop) save(ctx context.Context) {
	if !l.havePos || l.safe == l.saved || l.safe.Source == "" {
		return
	}
	if err := l.s.Checkpoint.Save(ctx, l.safe); err != nil && !errors.Is(err, context.Canceled) {
		l.s.Problem(Problem{Key: "checkpoint", Err: fmt.Errorf("saving the kernel log position: %w", err)})
		return
	}
	l.saved = l.safe
}
