/// Columns for the terminal: the first left-aligned, the others right-aligned (numbers) or,
/// with `textColumns`, left-aligned too; each as wide as its widest cell.
package enum TextTable {
    package static func render(headers: [String], rows: [[String]], indent: String = "  ", textColumns: Bool = false) -> [String] {
        let all = [headers] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return all.map { row in
            var line = indent
            for (i, cell) in row.enumerated() {
                let fill = String(repeating: " ", count: widths[i] - cell.count)
                line += i == 0 ? cell + fill : textColumns ? "  " + cell + fill : "  " + fill + cell
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }
}
