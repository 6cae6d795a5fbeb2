import Foundation

/// One self-contained HTML page: styles inline, charts as inline SVG, no script, and a
/// Content-Security-Policy that forbids every fetch, so the page cannot reach the network even
/// if something in it tried (the browser would refuse and say so on its console, which the
/// Chromium test reads). The markup is also well-formed XML, which the tests check.
package struct HTMLPage {
    var title: String
    private var parts: [String] = []

    init(title: String) { self.title = title }

    mutating func heading(_ text: String, level: Int = 2, id: String? = nil) {
        let idAttribute = id.map { " id=\"\(Self.escape($0))\"" } ?? ""
        parts.append("<h\(level)\(idAttribute)>\(Self.escape(text))</h\(level)>")
    }

    mutating func paragraph(_ text: String, cssClass: String? = nil) {
        let c = cssClass.map { " class=\"\($0)\"" } ?? ""
        parts.append("<p\(c)>\(Self.escape(text))</p>")
    }

    /// A table; cells are text. Columns after the first are right-aligned (numbers).
    mutating func table(headers: [String], rows: [[String]], caption: String? = nil) {
        var html = "<table>"
        if let caption { html += "<caption>\(Self.escape(caption))</caption>" }
        html += "<thead><tr>" + headers.map { "<th>\(Self.escape($0))</th>" }.joined() + "</tr></thead><tbody>"
        for row in rows {
            html +=
                "<tr>"
                + row.enumerated().map { i, cell in
                    i == 0 ? "<th scope=\"row\">\(Self.escape(cell))</th>" : "<td>\(Self.escape(cell))</td>"
                }.joined() + "</tr>"
        }
        parts.append(html + "</tbody></table>")
    }

    /// A chart (an `<svg>` element from SVGChart) in a figure with a caption.
    mutating func figure(_ svg: String, caption: String) {
        parts.append("<figure>\(svg)<figcaption>\(Self.escape(caption))</figcaption></figure>")
    }

    mutating func raw(_ html: String) { parts.append(html) }

    func render() -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8"/>
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>\(Self.escape(title))</title>
        <style>\(Self.style)</style>
        </head>
        <body>
        \(parts.joined(separator: "\n"))
        </body>
        </html>

        """
    }

    package func write(to path: String) throws {
        try Data(render().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Text for element content and attribute values.
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    // No ">" or "&" in here: the page stays well-formed XML.
    static let style = """
        body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1a202c; margin: 2em auto; max-width: 960px; padding: 0 1em; }
        h1 { font-size: 1.6em; margin-bottom: 0.2em; }
        h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #e2e8f0; padding-bottom: 0.2em; }
        h3 { font-size: 1.05em; margin: 1.4em 0 0.3em; }
        p.meta { color: #4a5568; margin-top: 0; }
        p.note { color: #4a5568; font-size: 0.9em; }
        table { border-collapse: collapse; margin: 0.8em 0; font-variant-numeric: tabular-nums; }
        caption { text-align: left; color: #4a5568; padding-bottom: 0.3em; }
        th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #edf2f7; }
        thead th { text-align: right; color: #4a5568; font-weight: 600; border-bottom: 2px solid #cbd5e0; }
        thead th:first-child, tbody th { text-align: left; font-weight: 500; }
        td { text-align: right; }
        figure { margin: 0.6em 0 1.4em; }
        figcaption { color: #4a5568; font-size: 0.9em; }
        svg { display: block; max-width: 100%; height: auto; }
        svg text { font: 11px system-ui, sans-serif; fill: #4a5568; }
        svg .title { font-size: 12px; font-weight: 600; fill: #1a202c; }
        svg .axis { stroke: #a0aec0; stroke-width: 1; }
        svg .grid { stroke: #edf2f7; stroke-width: 1; }
        svg .bar { fill: #63b3ed; }
        svg .p50 { stroke: #2b6cb0; fill: #2b6cb0; }
        svg .p90 { stroke: #d69e2e; fill: #d69e2e; }
        svg .p99 { stroke: #805ad5; fill: #805ad5; }
        svg .deadline { stroke: #e53e3e; stroke-width: 2; }
        svg text.deadline { fill: #c53030; stroke: none; font-weight: 600; }
        svg path.deadline.off-scale { fill: #e53e3e; stroke: none; }
        svg .series { fill: none; stroke-width: 2; }
        svg .marker { stroke-width: 1.5; stroke-dasharray: 4 3; }
        svg text.p50, svg text.p90, svg text.p99 { stroke: none; }
        """
}
