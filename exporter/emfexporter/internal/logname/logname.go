// Package logname resolves log group and log stream names with {attribute}
// placeholders from resource attributes, e.g. "/accel/{k8s.cluster.name}".
package logname

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Kind is what a name is for; CloudWatch allows different characters in each.
type Kind int

const (
	// Group names: 1–512 of [A-Za-z0-9._/#-].
	Group Kind = iota
	// Stream names: 1–512 characters other than ':' and '*'.
	Stream
)

const maxLen = 512

func (k Kind) String() string {
	if k == Group {
		return "log group name"
	}
	return "log stream name"
}

func (k Kind) allowed(r rune) bool {
	if k == Stream {
		return r != ':' && r != '*'
	}
	return r == '.' || r == '-' || r == '_' || r == '/' || r == '#' ||
		(r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
}

// Template is a parsed name.
type Template struct {
	kind  Kind
	parts []part
}

type part struct {
	literal string
	attr    string // set for a placeholder
}

// Parse reads a name template. Literal text must already be valid for kind;
// placeholders are "{attribute.key}".
func Parse(s string, kind Kind) (Template, error) {
	t := Template{kind: kind}
	if s == "" {
		return t, fmt.Errorf("%s is empty", kind)
	}
	rest := s
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		closing := strings.IndexByte(rest, '}')
		if closing >= 0 && (open < 0 || closing < open) {
			return t, fmt.Errorf("%s %q: '}' without '{'", kind, s)
		}
		if open < 0 {
			t.parts = append(t.parts, part{literal: rest})
			break
		}
		if open > 0 {
			t.parts = append(t.parts, part{literal: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return t, fmt.Errorf("%s %q: '{' without '}'", kind, s)
		}
		key := rest[open+1 : open+end]
		if key == "" || strings.ContainsAny(key, "{") {
			return t, fmt.Errorf("%s %q: empty or nested placeholder", kind, s)
		}
		t.parts = append(t.parts, part{attr: key})
		rest = rest[open+end+1:]
	}
	for _, p := range t.parts {
		for _, r := range p.literal {
			if !kind.allowed(r) {
				return t, fmt.Errorf("%s %q: character %q is not allowed", kind, s, r)
			}
		}
	}
	if l := len(t.literal()); l > maxLen {
		return t, fmt.Errorf("%s %q is longer than %d characters", kind, s, maxLen)
	}
	return t, nil
}

func (t Template) literal() string {
	var b strings.Builder
	for _, p := range t.parts {
		b.WriteString(p.literal)
	}
	return b.String()
}

// Static reports whether the template has no placeholder.
func (t Template) Static() bool {
	for _, p := range t.parts {
		if p.attr != "" {
			return false
		}
	}
	return true
}

// ValidateFallback checks that a fallback value can stand in for a missing
// attribute.
func ValidateFallback(v string) error {
	if v == "" {
		return errors.New("placeholder fallback is empty")
	}
	for _, r := range v {
		if !Group.allowed(r) {
			return fmt.Errorf("placeholder fallback %q: character %q is not allowed in log group names", v, r)
		}
	}
	return nil
}

// Render fills the placeholders from attrs. A missing or empty attribute
// becomes fallback; characters the kind does not allow become '_'; the result
// is cut to 512 bytes.
func (t Template) Render(attrs pcommon.Map, fallback string) string {
	if len(t.parts) == 1 && t.parts[0].attr == "" {
		return t.parts[0].literal
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.attr == "" {
			b.WriteString(p.literal)
			continue
		}
		v := fallback
		if a, ok := attrs.Get(p.attr); ok {
			if s := a.AsString(); s != "" {
				v = s
			}
		}
		for _, r := range v {
			if !t.kind.allowed(r) {
				r = '_'
			}
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) > maxLen {
		s = s[:maxLen]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
	}
	return s
}
