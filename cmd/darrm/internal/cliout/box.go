package cliout

// This file draws boxed tables: a header row and the rows under it,
// between box-drawing lines, every cell padded by a space on either side
// and left-aligned.

import (
	"bufio"
	"io"
	"strings"

	"github.com/clipperhouse/displaywidth"
)

// DisplayWidth is the width of s in a terminal's columns: each rune's
// (displaywidth.Rune; a wide one 2, a combining one 0), a tab 4.
func DisplayWidth(s string) int {
	w := 0
	for _, r := range s {
		if r == '\t' {
			w += tabWidth
			continue
		}
		w += displaywidth.Rune(r)
	}
	return w
}

// tabWidth is the columns a tab takes in a cell, where it is spaces.
const tabWidth = 4

// cellLines returns the lines a cell prints as: its text, its tabs as
// spaces, trimmed of blank space at either end, one line for each line
// break but those that leave an empty line (a control character is kept,
// and takes no column).
func cellLines(s string) []string {
	s = strings.ReplaceAll(s, "\t", strings.Repeat(" ", tabWidth))
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) == 1 {
		return lines
	}
	out := lines[:0]
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// box draws a table of columns of fixed widths (the widest line of each
// column's cells), a row at a time: Start, Row for the header and each
// row, with Rule under the header, then End.
type box struct {
	w      *bufio.Writer
	widths []int
}

// newBox returns a box of columns widths wide (their content, without the
// cells' padding) that writes to w.
func newBox(w io.Writer, widths []int) *box {
	return &box{w: bufio.NewWriter(w), widths: widths}
}

// line writes a line of the box's borders: left, a run of ─ per column
// joined by mid, right.
func (b *box) line(left, mid, right string) {
	b.w.WriteString(left)
	for j, wd := range b.widths {
		if j > 0 {
			b.w.WriteString(mid)
		}
		b.w.WriteString(strings.Repeat("─", wd+2))
	}
	b.w.WriteString(right + "\n")
}

// Start writes the top border.
func (b *box) Start() { b.line("┌", "┬", "┐") }

// Rule writes the line under the header.
func (b *box) Rule() { b.line("├", "┼", "┤") }

// Row writes a row of cells, a cell missing at its end empty, as many
// lines as its cell of most lines.
func (b *box) Row(cells []string) {
	lines := make([][]string, len(b.widths))
	n := 1
	for j := range b.widths {
		if j < len(cells) {
			lines[j] = cellLines(cells[j])
		}
		n = max(n, len(lines[j]))
	}
	for i := range n {
		b.w.WriteString("│")
		for j, wd := range b.widths {
			text := ""
			if i < len(lines[j]) {
				text = lines[j][i]
			}
			b.w.WriteString(" " + text + strings.Repeat(" ", max(wd-DisplayWidth(text), 0)) + " │")
		}
		b.w.WriteString("\n")
	}
}

// End writes the bottom border and flushes the box's writer.
func (b *box) End() error {
	b.line("└", "┴", "┘")
	return b.w.Flush()
}

// Flush writes what the box holds: a stream's rows as they come.
func (b *box) Flush() error { return b.w.Flush() }

// boxWidths returns the widths of the columns of a table of header and
// rows: for each, the widest line of its cells as printed.
func boxWidths(header []string, rows [][]string) []int {
	n := len(header)
	for _, r := range rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	measure := func(j int, cell string) {
		for _, l := range cellLines(cell) {
			widths[j] = max(widths[j], DisplayWidth(l))
		}
	}
	for j, h := range header {
		measure(j, h)
	}
	for _, r := range rows {
		for j, c := range r {
			measure(j, c)
		}
	}
	return widths
}
