// Package tap writes Test Anything Protocol (version 13) output.
//
// It stands in for github.com/mndrix/tap-go, which Debian does not package,
// when tests/conformance/run.sh builds the runtime-tools validation suite.
// It provides only the part of that API the suite calls: New, Header, Ok,
// Pass, Fail, Skip, Todo, Count, AutoPlan, Diagnostic, Diagnosticf and YAML.
// Written for brig from the TAP 13 specification.
package tap

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// T is a TAP stream. Copies made by Todo share the test counter.
type T struct {
	counter *counter
	// TODO marks every result written through this T as a TODO test.
	TODO bool
	// Writer receives the output (os.Stdout by default).
	Writer io.Writer
}

type counter struct {
	mu   sync.Mutex
	next int
}

func (c *counter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.next
	c.next++
	return n
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next - 1
}

// New returns a TAP stream that writes to standard output.
func New() *T {
	return &T{counter: &counter{next: 1}, Writer: os.Stdout}
}

func (t *T) printf(format string, a ...interface{}) {
	fmt.Fprintf(t.Writer, format, a...)
}

// Header writes the version line and, when testCount > 0, the plan.
// With testCount 0 the plan comes later from AutoPlan.
func (t *T) Header(testCount int) {
	t.printf("TAP version 13\n")
	if testCount > 0 {
		t.printf("1..%d\n", testCount)
	}
}

// oneLine keeps a description on its test line: a newline would end the
// line and a '#' would start a directive.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "#", "\\#")
}

// Ok writes one test result.
func (t *T) Ok(test bool, description string) {
	status := "ok"
	if !test {
		status = "not ok"
	}
	line := fmt.Sprintf("%s %d", status, t.counter.take())
	if description != "" {
		line += " - " + oneLine(description)
	}
	if t.TODO {
		line += " # TODO"
	}
	t.printf("%s\n", line)
}

// Pass writes a passing test.
func (t *T) Pass(description string) { t.Ok(true, description) }

// Fail writes a failing test.
func (t *T) Fail(description string) { t.Ok(false, description) }

// Skip writes count skipped tests, each with the reason.
func (t *T) Skip(count int, description string) {
	for i := 0; i < count; i++ {
		t.printf("ok %d # SKIP %s\n", t.counter.take(), oneLine(description))
	}
}

// Todo returns a stream whose results are marked TODO; it numbers its tests
// together with t.
func (t *T) Todo() *T {
	todo := *t
	todo.TODO = true
	return &todo
}

// Count returns how many tests have been written.
func (t *T) Count() int { return t.counter.count() }

// AutoPlan writes the plan for the tests written so far.
func (t *T) AutoPlan() { t.printf("1..%d\n", t.Count()) }

// Diagnostic writes a comment; each line of message becomes its own comment.
func (t *T) Diagnostic(message string) {
	t.printf("# %s\n", strings.ReplaceAll(strings.TrimRight(message, "\n"), "\n", "\n# "))
}

// Diagnosticf writes a formatted comment.
func (t *T) Diagnosticf(format string, a ...interface{}) {
	t.Diagnostic(fmt.Sprintf(format, a...))
}

// YAML writes message as a YAML block attached to the previous result (or,
// before any result, to the stream). Maps become one "key: value" line per
// key in sorted order, multi-line strings literal blocks; anything else is
// written in flow style (JSON, which YAML accepts).
func (t *T) YAML(message interface{}) error {
	var b strings.Builder
	b.WriteString("  ---\n")
	v := reflect.ValueOf(message)
	if v.IsValid() && v.Kind() == reflect.Map {
		keys := v.MapKeys()
		names := make([]string, len(keys))
		byName := make(map[string]reflect.Value, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprint(k.Interface())
			byName[names[i]] = v.MapIndex(k)
		}
		sort.Strings(names)
		for _, name := range names {
			val, err := yamlValue(byName[name].Interface(), "    ")
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "  %s:%s\n", yamlKey(name), val)
		}
	} else if message != nil {
		val, err := yamlValue(message, "    ")
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  message:%s\n", val)
	}
	b.WriteString("  ...\n")
	t.printf("%s", b.String())
	return nil
}

func yamlKey(k string) string {
	if k == "" || strings.ContainsAny(k, ":#{}[],&*!|>'\"%@`\n") ||
		strings.TrimSpace(k) != k {
		return strconv.Quote(k)
	}
	return k
}

// yamlValue renders v after "key:", with the leading space or newline.
func yamlValue(v interface{}, indent string) (string, error) {
	if s, ok := v.(string); ok {
		if strings.Contains(strings.TrimRight(s, "\n"), "\n") {
			chomp := "-"
			if strings.HasSuffix(s, "\n") {
				chomp = ""
				s = strings.TrimRight(s, "\n")
			}
			if strings.HasPrefix(s, " ") {
				chomp = "2" + chomp
			}
			var b strings.Builder
			fmt.Fprintf(&b, " |%s", chomp)
			for _, line := range strings.Split(s, "\n") {
				b.WriteString("\n")
				if line != "" {
					b.WriteString(indent + line)
				}
			}
			return b.String(), nil
		}
		return " " + strconv.Quote(s), nil
	}
	if err, ok := v.(error); ok && err != nil {
		return " " + strconv.Quote(err.Error()), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return " " + string(out), nil
}
