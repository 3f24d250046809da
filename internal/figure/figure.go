// Package figure saves gonum/plot figures for darrm's commands: the format
// follows the file extension, and the file is written atomically, so a
// failed command leaves no half-written image behind.
package figure

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/darrm/darrm/internal/atomicfile"
)

// CheckPath validates a figure file name before any work is done.
func CheckPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return fmt.Errorf("--plot %q: the file name must end in .png or .svg", path)
}

// SaveGrid draws plots in a grid of rows x cols panels (row-major, nil
// panels left empty) on a w x h canvas and writes it to path.
func SaveGrid(path string, w, h vg.Length, rows, cols int, plots []*plot.Plot) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	var canvas vg.CanvasWriterTo
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		canvas = vgsvg.New(w, h)
	} else {
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range grid[r] {
			if i := r*cols + c; i < len(plots) {
				grid[r][c] = plots[i]
			}
		}
	}
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	return atomicfile.Write(path, 0o644, func(f *os.File) error {
		_, err := canvas.WriteTo(f)
		return err
	})
}
