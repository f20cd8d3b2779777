// Every value of values.yaml is documented: a key is documented when a
// comment stands directly above it, when it follows a documented sibling
// without a blank line between them (a comment may cover a run of keys), or
// when its parent key is documented (a comment may cover a block).
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

var reKey = regexp.MustCompile(`^(\s*)(?:- )?([A-Za-z0-9_.-]+):(\s|$)`)

func checkValuesDoc(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	type level struct {
		indent     int
		documented bool
	}
	var stack []level // documented parents by indent
	var undocumented []string
	comment := false
	prevIndent, prevDoc := -1, false
	keys := 0
	for n, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			comment, prevIndent = false, -1
			continue
		case strings.HasPrefix(t, "#"):
			comment = true
			continue
		}
		m := reKey.FindStringSubmatch(line)
		if m == nil {
			comment = false
			continue
		}
		keys++
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		doc := comment || (prevIndent == indent && prevDoc)
		for _, l := range stack {
			doc = doc || l.documented
		}
		if !doc {
			undocumented = append(undocumented, fmt.Sprintf("%s:%d: %s", path, n+1, m[2]))
		}
		stack = append(stack, level{indent, doc})
		comment, prevIndent, prevDoc = false, indent, doc
	}
	if len(undocumented) > 0 {
		return fmt.Errorf("values without a comment:\n  %s", strings.Join(undocumented, "\n  "))
	}
	fmt.Printf("values: %d keys, each documented\n", keys)
	return nil
}
