//! fslab's own text tables (`results list`, `results show`, `history`,
//! `compare`, `fslab run`'s summary): columns as wide as their widest
//! value, so a long phase name or a large rate never pushes a row out of
//! line. The originals' own output formats (fs_mark's table, dbench's
//! lines, tiotest's box) are not made here: scripts read them as they are.

use comfy_table::{presets, CellAlignment, ColumnConstraint, ContentArrangement};

/// How a column's values line up: names to the left, numbers to the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A plain table: a header line, then one line per row; two spaces between
/// columns, no borders, no trailing blanks.
pub struct Table {
    inner: comfy_table::Table,
    aligns: Vec<Align>,
    indent: usize,
}

impl Table {
    /// A table with these column headings and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        let mut inner = comfy_table::Table::new();
        inner
            .load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(columns.iter().map(|(h, _)| *h));
        Table {
            inner,
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            indent: 0,
        }
    }

    /// Every line starts with this many spaces.
    pub fn indent(mut self, n: usize) -> Self {
        self.indent = n;
        self
    }

    /// Adds a row: one value per column (missing ones are empty).
    pub fn row<I, S>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: ToString,
    {
        self.inner
            .add_row(cells.into_iter().map(|c| c.to_string()).collect::<Vec<_>>());
        self
    }

    /// No row was added.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The header and the rows, each line ending in a newline.
    pub fn render(mut self) -> String {
        let last = self.aligns.len().saturating_sub(1);
        for (i, col) in self.inner.column_iter_mut().enumerate() {
            let align = self.aligns.get(i).copied().unwrap_or(Align::Left);
            col.set_cell_alignment(match align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
            col.set_padding((0, if i == last { 0 } else { 2 }));
            col.set_constraint(ColumnConstraint::ContentWidth);
        }
        let pad = " ".repeat(self.indent);
        let mut s = String::new();
        for line in self.inner.lines() {
            let line = line.trim_end();
            s.push_str(&pad);
            s.push_str(line);
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_widen_to_the_longest_value_and_numbers_align_right() {
        let mut t = Table::new(&[("phase", Align::Left), ("ops/s", Align::Right)]);
        t.row(["create", "12.5"]);
        t.row(["intial_create", "2176.109"]);
        let s = t.render();
        assert_eq!(
            s,
            "phase             ops/s\ncreate             12.5\nintial_create  2176.109\n"
        );
    }

    #[test]
    fn an_indented_table_has_no_trailing_blanks() {
        let mut t = Table::new(&[("a", Align::Left), ("b", Align::Left)]).indent(2);
        t.row(["x", ""]);
        assert!(!t.is_empty());
        assert_eq!(t.render(), "  a  b\n  x\n");
    }
}
