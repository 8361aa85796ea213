import AuthmockModel
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
    static let plotWidth = 760.0
    /// Room right of the plot for a late call's outcome.
    static let margin = 150.0
    static let rowHeight = 26.0
    static let top = 28.0

    public static func svg(_ result: CaseResult) -> String {
        let entries = result.entries ?? []
        let calls = result.calls
        guard !entries.isEmpty || !calls.isEmpty else { return "" }
        let flagged = Set(result.failedFindings.flatMap { $0.entries ?? [] })
        let superfluous = Set(
            result.failedFindings.filter { $0.name == .superfluousRefreshes || $0.name == .superfluousSignIns }.flatMap { $0.entries ?? [] })
        let end = max(
            entries.map { $0.at + $0.seconds }.max() ?? 0, result.signedOut ?? 0,
            calls.compactMap { $0.answered ?? $0.sent }.max() ?? 0, 0.001)
        func x(_ t: Double) -> Double { labelWidth + max(0, t) / end * plotWidth }
        func width(_ seconds: Double) -> Double { max(4, seconds / end * plotWidth) }

        // Lanes: the token endpoint, each call, then requests of no call.
        // Within a lane, requests that would overlap (their box or their
        // text) go on lines of their own: refreshes side by side are the
        // picture of a missing single flight.
        let tokenKinds: Set<String> = ["login", "refresh"]
        let callIDs = calls.map(\.call)
        var lanes: [(label: String, call: CallOutcome?, entries: [ReportedEntry])] = [
            ("token endpoint", nil, entries.filter { tokenKinds.contains($0.kind) && $0.call == nil })
        ]
        for call in calls {
            // Another instance's call (the app's extension) says so before its path, which a cut label loses first.
            let label = "\(call.call) " + (call.instance.map { "[instance \($0)] " } ?? "") + call.request
            lanes.append((label, call, entries.filter { $0.call == call.call }))
        }
        let loose = entries.filter { !(tokenKinds.contains($0.kind) && $0.call == nil) && ($0.call.map { !callIDs.contains($0) } ?? true) }
        if !loose.isEmpty { lanes.append(("other requests", nil, loose)) }
        let stacked = lanes.map { lane in
            stack(lane.entries) { entry in
                // The text's width, in seconds on this scale, keeps labels apart.
                max(entry.seconds, (Double(text(entry).count) * charWidth + 8) / plotWidth * end)
            }
        }
        let lines = stacked.map { max(1, ($0.values.max() ?? -1) + 1) }
        let height = top + Double(lines.reduce(0, +)) * rowHeight + 34

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="\(Int(labelWidth + plotWidth + margin))" height="\(Int(height))" \
            viewBox="0 0 \(Int(labelWidth + plotWidth + margin)) \(Int(height))" font-family="ui-monospace, Menlo, monospace" font-size="11" \
            role="img" aria-label="time line of \(esc(result.label))">
            <title>\(esc(result.label)) \(esc(result.name)): \(result.verdict.rawValue)</title>\n
            """
        for step in 0...4 {
            let t = end * Double(step) / 4
            svg += "<line x1=\"\(f(x(t)))\" y1=\"\(f(top - 6))\" x2=\"\(f(x(t)))\" y2=\"\(f(height - 30))\" stroke=\"#e5e5e5\"/>"
            svg += "<text x=\"\(f(x(t)))\" y=\"\(f(height - 16))\" text-anchor=\"middle\" fill=\"#666\">\(String(format: "%.2f s", t))</text>\n"
        }
        if let signedOut = result.signedOut {
            svg +=
                "<g class=\"signed-out\"><line x1=\"\(f(x(signedOut)))\" y1=\"\(f(top - 6))\" x2=\"\(f(x(signedOut)))\" y2=\"\(f(height - 30))\" "
                + "stroke=\"#7c3aed\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>"
                + "<text x=\"\(f(x(signedOut) + 3))\" y=\"\(f(height - 30))\" fill=\"#7c3aed\">signed out</text></g>\n"
        }
        var y = top
        for (index, lane) in lanes.enumerated() {
            svg += rowLabel(lane.label, y: y, lines: lines[index])
            if let call = lane.call {
                // The span the application waited, and what it got.
                let middle = y + rowHeight - 3
                let sent = call.sent ?? 0
                let answered = call.answered ?? end
                svg +=
                    "<line class=\"call\" x1=\"\(f(x(sent)))\" y1=\"\(f(middle))\" x2=\"\(f(x(answered)))\" y2=\"\(f(middle))\" stroke=\"#9ca3af\" stroke-width=\"1.5\"/>"
                // Where the app cancelled the call: a cross on its line.
                if let cancelled = call.cancelled {
                    svg +=
                        "<g class=\"cancel\"><text x=\"\(f(x(cancelled)))\" y=\"\(f(middle + 4))\" text-anchor=\"middle\" fill=\"#b45309\" font-size=\"13\">✕</text>"
                        + "<title>cancelled by the app at \(String(format: "%.3f s", cancelled))</title></g>\n"
                }
                let outcome = call.outcome + (call.status.map { " \($0)" } ?? "")
                let color = call.outcome == "ok" ? "#166534" : call.outcome == "reauth_required" ? "#7c2d12" : "#b91c1c"
                let lastEnd = lane.entries.map { x($0.at) + max(width($0.seconds), Double(text($0).count) * charWidth + 6) }.max() ?? 0
                svg +=
                    "<text class=\"outcome\" x=\"\(f(max(x(answered), lastEnd) + 4))\" y=\"\(f(y + rowHeight / 2 + 4))\" fill=\"\(color)\">\(esc(outcome))</text>\n"
            }
            for entry in lane.entries {
                let line = Double(stacked[index][entry.seq] ?? 0)
                svg += box(
                    entry, y: y + line * rowHeight + 3, x: x(entry.at), width: width(entry.seconds), flagged: flagged.contains(entry.seq),
                    superfluous: superfluous.contains(entry.seq))
            }
            y += Double(lines[index]) * rowHeight
        }
        svg +=
            "<text x=\"4\" y=\"14\" fill=\"#444\">box: token carried, status, →issued; green success, orange a refused token (a 401, or a dialect's code in a 200), red another error, grey no answer; "
            + "red outline: a failed finding; ⚡ fault</text>\n"
        return svg + "</svg>\n"
    }

    static let charWidth = 6.7

    /// What a request's box says: the token it presented, the status, the tokens it was handed, a fault.
    static func text(_ entry: ReportedEntry) -> String {
        var text = entry.kind == "refresh" ? "refresh " : entry.kind == "login" ? "sign-in " : ""
        text += entry.presented.map(\.label).joined(separator: "+")
        text += entry.status == 0 ? " ✕" : " \(entry.status)"
        // A 2xx error is told by its code.
        if entry.situation != nil, (200..<300).contains(entry.status), let code = entry.code { text += ":\(code)" }
        let issued = entry.issued.map(\.label).joined(separator: ",")
        if !issued.isEmpty { text += "→\(issued)" }
        if entry.fault != nil { text += " ⚡" }
        return text
    }

    /// One request: a box as long as the server held it, with the token it
    /// presented (or issued) and the status.
    static func box(_ entry: ReportedEntry, y: Double, x: Double, width: Double, flagged: Bool, superfluous: Bool) -> String {
        let fill: String =
            if entry.status == 0 || !entry.delivered { "#e5e7eb" } else if (200..<300).contains(entry.status) && entry.code == nil {
                superfluous ? "#fecaca" : "#bbf7d0"
            } else if entry.status == 401 || entry.code == "UNAUTHENTICATED" || JournalEntry.credentialRefusals.contains(entry.situation ?? "") {
                "#fed7aa"
            } else { "#fca5a5" }
        let text = text(entry)
        let classes = ["req", entry.kind] + (flagged ? ["flagged"] : []) + (superfluous ? ["superfluous"] : [])
        var tip = "#\(entry.seq) +\(String(format: "%.3f", entry.at))s \(entry.method) \(entry.path)"
        for token in entry.presented { tip += " \(token.kind) \(token.label) \(token.state ?? "")" }
        tip += entry.status == 0 ? " -> no answer" : " -> \(entry.status)"
        if let code = entry.code { tip += " \(code)" }
        if let situation = entry.situation { tip += " (\(situation))" }
        for token in entry.issued { tip += " issued \(token.kind) \(token.label)" }
        if let fault = entry.fault { tip += " (fault \(fault)\(entry.faultAction.map { ": \($0)" } ?? ""))" }
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
            + "<line x1=\"0\" y1=\"\(f(y + Double(lines) * rowHeight))\" x2=\"\(f(labelWidth + plotWidth + margin))\" y2=\"\(f(y + Double(lines) * rowHeight))\" stroke=\"#f0f0f0\"/>\n"
    }

    /// Lines of a lane: each request on the first line free at its arrival,
    /// `extent` the seconds it takes up there (its hold, or its text).
    static func stack(_ entries: [ReportedEntry], extent: (ReportedEntry) -> Double) -> [Int: Int] {
        var lineEnds: [Double] = []
        var out: [Int: Int] = [:]
        for entry in entries.sorted(by: { ($0.at, $0.seq) < ($1.at, $1.seq) }) {
            let line = lineEnds.firstIndex { $0 <= entry.at } ?? lineEnds.count
            if line == lineEnds.count { lineEnds.append(0) }
            lineEnds[line] = entry.at + extent(entry)
            out[entry.seq] = line
        }
        return out
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func esc(_ text: String) -> String { Reports.escape(text) }
}
