// A fixture for tests/unit/test_code_grammars.py: every kind Go has.
package shapes

import "fmt"

const MaxSize = 10

const (
	ModeFast = iota
	ModeSlow
)

type Point struct {
	X, Y int
}

type Shape interface {
	Area() float64
	fmt.Stringer
}

type (
	ID    int
	Alias = Point
)

type Box[T any] struct {
	items []T
}

func New(x, y int) *Point {
	const local = 1
	return &Point{X: x, Y: y}
}

func (p *Point) Area() float64 {
	return 0
}

func (b Box[T]) Len() int {
	return len(b.items)
}
