import Foundation

/// A case run drawn as a time line (SVG, no script): one row for the token
/// endpoint (sign-ins and refreshes as bars while they are in flight, a
/// superfluous one red), one row per application call (the call from when the
/// runner sent it to when the driver answered, each attempt a box with the
/// token it carried and the status it got), faults marked where they fired,
/// and every request a failed finding points at outlined in red. Read from
/// the report's data alone (`CaseResult.entries`, `calls`, `findings`), so a
/// saved JSON report draws the same picture.
public enum SequenceDiagram {
    static let labelWidth = 150.0
    static let plotWidth = 820.0
    static let rowHeight = 26.0
    static let top = 28.0

    public static func svg(_ result: CaseResult) -> String {
        let entries = result.entries ?? []
        let calls = result.calls
        guard !entries.isEmpty || !calls.isEmpty else { return "" }
        let flagged = Set(result.failedFindings.flatMap { $0.entries ?? [] })
        let superfluous = Set(
            result.failedFindings.filter { $0.name == .superfluousRefreshes || $0.name == .superfluousSignIns }.flatMap { $0.entries ?? [] })

        // Rows: the token endpoint (stacked where requests overlap), then each call, then requests of no call.
        let tokenKinds: Set<String> = ["login", "refresh"]
        let endpoint = entries.filter { tokenKinds.contains($0.kind) && $0.call == nil }
        let stacks = stack(endpoint)
        let callIDs = calls.map(\.call)
        let loose = entries.filter { !(tokenKinds.contains($0.kind) && $0.call == nil) && ($0.call.map { !callIDs.contains($0) } ?? true) }
        let endpointRows = max(1, (stacks.values.max() ?? -1) + 1)
        let rows = endpointRows + calls.count + (loose.isEmpty ? 0 : 1)
        let height = top + Double(rows) * rowHeight + 34

        let end = max(
            entries.map { $0.at + $0.seconds }.max() ?? 0,
            calls.compactMap { $0.answered ?? $0.sent }.max() ?? 0, 0.001)
        func x(_ t: Double) -> Double { labelWidth + max(0, t) / end * plotWidth }
        func width(_ seconds: Double) -> Double { max(4, seconds / end * plotWidth) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="\(Int(labelWidth + plotWidth + 40))" height="\(Int(height))" \
            viewBox="0 0 \(Int(labelWidth + plotWidth + 40)) \(Int(height))" font-family="ui-monospace, Menlo, monospace" font-size="11" \
            role="img" aria-label="time line of \(esc(result.label))">
            <title>\(esc(result.label)) \(esc(result.name)): \(result.verdict.rawValue)</title>\n
            """
        // Time axis: five ticks.
        for step in 0...4 {
            let t = end * Double(step) / 4
            svg += "<line x1=\"\(f(x(t)))\" y1=\"\(f(top - 6))\" x2=\"\(f(x(t)))\" y2=\"\(f(height - 30))\" stroke=\"#e5e5e5\"/>"
            svg += "<text x=\"\(f(x(t)))\" y=\"\(f(height - 16))\" text-anchor=\"middle\" fill=\"#666\">\(String(format: "%.2f s", t))</text>\n"
        }
        // Row labels and guides.
        func rowY(_ row: Int) -> Double { top + Double(row) * rowHeight }
        svg += rowLabel("token endpoint", y: rowY(0), lines: endpointRows)
        for (index, call) in calls.enumerated() {
            svg += rowLabel("\(call.call) \(call.request)", y: rowY(endpointRows + index), lines: 1)
        }
        if !loose.isEmpty { svg += rowLabel("other requests", y: rowY(rows - 1), lines: 1) }

        // Calls: the span the application waited, and its outcome.
        for (index, call) in calls.enumerated() {
            let y = rowY(endpointRows + index) + rowHeight / 2
            let sent = call.sent ?? 0
            let answered = call.answered ?? end
            svg += "<line class=\"call\" x1=\"\(f(x(sent)))\" y1=\"\(f(y))\" x2=\"\(f(x(answered)))\" y2=\"\(f(y))\" stroke=\"#9ca3af\" stroke-width=\"2\"/>"
            let outcome = call.outcome + (call.status.map { " \($0)" } ?? "")
            let color = call.outcome == "ok" ? "#166534" : call.outcome == "reauth_required" ? "#7c2d12" : "#b91c1c"
            svg += "<text class=\"outcome\" x=\"\(f(x(answered) + 4))\" y=\"\(f(y + 4))\" fill=\"\(color)\">\(esc(outcome))</text>\n"
        }
        // Requests.
        for entry in entries {
            let row: Int
            if tokenKinds.contains(entry.kind) && entry.call == nil {
                row = stacks[entry.seq] ?? 0
            } else if let call = entry.call, let index = callIDs.firstIndex(of: call) {
                row = endpointRows + index
            } else {
                row = rows - 1
            }
            svg += box(entry, y: rowY(row) + 3, x: x(entry.at), width: width(entry.seconds), flagged: flagged.contains(entry.seq),
                superfluous: superfluous.contains(entry.seq))
        }
        // Legend.
        svg +=
            "<text x=\"\(f(labelWidth))\" y=\"14\" fill=\"#444\">token carried, status; green 2xx, orange 401, red other error, grey no answer; "
            + "red outline: a failed finding points here; ⚡ fault fired</text>\n"
        return svg + "</svg>\n"
    }

    /// One request: a box as long as the server held it, with the token it
    /// presented (or issued) and the status.
    static func box(_ entry: ReportedEntry, y: Double, x: Double, width: Double, flagged: Bool, superfluous: Bool) -> String {
        let fill: String =
            if entry.status == 0 || !entry.delivered { "#e5e7eb" } else if (200..<300).contains(entry.status) && entry.code == nil {
                superfluous ? "#fecaca" : "#bbf7d0"
            } else if entry.status == 401 || entry.code == "UNAUTHENTICATED" { "#fed7aa" } else { "#fca5a5" }
        let presented = entry.presented.map(\.label).joined(separator: "+")
        let issued = entry.issued.map(\.label).joined(separator: ",")
        var text = entry.kind == "refresh" ? "refresh " : entry.kind == "login" ? "sign-in " : ""
        text += presented
        text += entry.status == 0 ? " ✕" : " \(entry.status)"
        if !issued.isEmpty { text += "→\(issued)" }
        if entry.fault != nil { text += " ⚡" }
        let classes = ["req", entry.kind] + (flagged ? ["flagged"] : []) + (superfluous ? ["superfluous"] : [])
        var tip = "#\(entry.seq) +\(String(format: "%.3f", entry.at))s \(entry.method) \(entry.path)"
        for token in entry.presented { tip += " \(token.kind) \(token.label) \(token.state ?? "")" }
        tip += entry.status == 0 ? " -> no answer" : " -> \(entry.status)"
        if let code = entry.code { tip += " \(code)" }
        for token in entry.issued { tip += " issued \(token.kind) \(token.label)" }
        if let fault = entry.fault { tip += " (fault \(fault))" }
        if !entry.delivered { tip += " (not delivered)" }
        if superfluous { tip += " [superfluous]" }
        let stroke = flagged ? "stroke=\"#dc2626\" stroke-width=\"2.5\"" : "stroke=\"#6b7280\" stroke-width=\"0.8\""
        return "<g class=\"\(classes.joined(separator: " "))\" data-seq=\"\(entry.seq)\"><title>\(esc(tip))</title>"
            + "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(width))\" height=\"\(f(rowHeight - 6))\" rx=\"3\" fill=\"\(fill)\" \(stroke)/>"
            + "<text x=\"\(f(x + 3))\" y=\"\(f(y + rowHeight / 2 + 1))\" fill=\"#111\">\(esc(text))</text></g>\n"
    }

    static func rowLabel(_ text: String, y: Double, lines: Int) -> String {
        let shown = text.count > 22 ? String(text.prefix(21)) + "…" : text
        return "<text class=\"lane\" x=\"4\" y=\"\(f(y + rowHeight / 2 + 4))\" fill=\"#333\"><title>\(esc(text))</title>\(esc(shown))</text>"
            + "<line x1=\"0\" y1=\"\(f(y + Double(lines) * rowHeight))\" x2=\"\(f(labelWidth + plotWidth + 40))\" y2=\"\(f(y + Double(lines) * rowHeight))\" stroke=\"#f0f0f0\"/>\n"
    }

    /// Overlapping token-endpoint requests on separate lines (a refresh in
    /// flight beside another is the picture of a missing single flight).
    static func stack(_ entries: [ReportedEntry]) -> [Int: Int] {
        var lineEnds: [Double] = []
        var out: [Int: Int] = [:]
        for entry in entries.sorted(by: { $0.at < $1.at }) {
            let line = lineEnds.firstIndex { $0 <= entry.at } ?? lineEnds.count
            if line == lineEnds.count { lineEnds.append(0) }
            lineEnds[line] = entry.at + max(entry.seconds, 0.0005)
            out[entry.seq] = line
        }
        return out
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func esc(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
