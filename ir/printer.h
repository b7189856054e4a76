// PrintGraph: the stable, readable text form of a Graph; ParseGraph (ir/parser.h) reads it back.
//
//   graph @mlp(%0 "x": f32[s0, 64], %1 "w": f32[64, 64]) {
//     symbol s0 min 2 max 0 hint 8
//     guard s0 <= 4096 "batch limit" loc("model.cc":3:1)
//     %2 "b": f32[64] = constant dense "0000803f..."
//     %3: f32[4] = constant external "w.bin" offset 0 length 16
//     %4: f32[s0, 64] = aten.mm(%0, %1)
//     %5: f32[s0, 64] = aten.add(%4, %2) {alpha = 1.0} name "add1" loc("model.cc":12:3 in "f")
//     %6: f32[s0], %7: i64[s0] = aten.max_dim(%5) {dim = 1, keepdim = false}
//     return %5, %6
//   }
//
// The text is lossless: ParseGraph(PrintGraph(g)) has the same ToProto() as g and prints the
// same text. Printing is deterministic (values print by id, attributes sorted by name), so the
// text serves as a golden in tests.
//
// Grammar (tokens may be separated by any whitespace; `//` starts a comment to the end of the
// line; {x} is zero or more x, [x] optional):
//
//   graph    := 'graph' '@' name '(' [def {',' def}] ')' '{' {stmt} '}'
//   stmt     := 'symbol' name 'min' int 'max' int 'hint' int
//             | 'guard' expr ('==' | '!=' | '<' | '<=') expr [STRING] [loc]
//             | def '=' 'constant' ('dense' STRING | 'external' STRING 'offset' int 'length' int)
//             | [def {',' def} '='] name '(' [VALUE {',' VALUE}] ')' [attrs] ['name' STRING] [loc]
//             | 'return' [VALUE {',' VALUE}]            (last statement; may be left out)
//   def      := VALUE [STRING] ':' type                 (the string is the value's name)
//   type     := DTYPE '[' [expr {',' expr}] ']' ['{' [expr {',' expr}] '}'] ['@' device]
//   device   := ('cpu' | 'cuda') ':' int                (printed only when not cpu:0)
//   attrs    := '{' name '=' attr {',' name '=' attr} '}'
//   attr     := the AttrToString forms (ir/attribute.h): int | float | 'true' | 'false' | STRING
//             | '[' ints ']' | 'floats' '[' floats ']' | DTYPE | 'sym' '(' expr ')'
//             | 'syms' '[' exprs ']'
//   loc      := 'loc' '(' STRING ':' int ':' int ['in' STRING] ')'
//   name     := IDENT | STRING                          (IDENT: [A-Za-z_][A-Za-z0-9_.]*)
//   VALUE    := '%' digits                              (the value id)
//   expr     := a SymExpr in its ToString form ("2*s0 + 4", "floordiv(s0, 2)")
//
// Dense constant bytes are lowercase hex of the little-endian contiguous data. Names that are not
// identifiers, or that are keywords (graph symbol guard constant return name loc dense external),
// print as quoted strings with C escapes. Constants print before nodes, in the graph's order.
#ifndef COIL_IR_PRINTER_H_
#define COIL_IR_PRINTER_H_

#include <string>

#include "ir/graph.h"

namespace coil {

// The text form of `graph`, ending in a newline.
std::string PrintGraph(const Graph& graph);

}  // namespace coil

#endif  // COIL_IR_PRINTER_H_
