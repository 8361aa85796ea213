/// The control API's operations under `/_authmock/`, each declared once: the
/// server routes every case to its behaviour (`ControlRoutes`, a switch the
/// compiler keeps complete), `GET /_authmock/` lists them, and `ControlClient`
/// and `authmock ctl` send them by this method and path.
public enum ControlOperation: String, CaseIterable, Sendable {
    case routes, reset, clock, advanceClock, setClock, tokens, expireTokens, revokeTokens, keys, rotateKeys
    case faults, addFault, clearFaults, journal, pruneTokens, journalCount, arrivals, verdicts
    case console, timeline, events

    /// Every path starts with this.
    public static let prefix = "/_authmock"

    public var method: String {
        switch self {
        case .routes, .clock, .tokens, .keys, .faults, .journal, .journalCount, .arrivals, .verdicts, .console, .timeline, .events: "GET"
        case .reset, .advanceClock, .setClock, .expireTokens, .revokeTokens, .rotateKeys, .addFault, .pruneTokens: "POST"
        case .clearFaults: "DELETE"
        }
    }

    /// The path after `prefix`.
    public var path: String {
        switch self {
        case .routes: ""
        case .reset: "/reset"
        case .clock: "/clock"
        case .advanceClock: "/clock/advance"
        case .setClock: "/clock/set"
        case .tokens: "/tokens"
        case .expireTokens: "/tokens/expire"
        case .revokeTokens: "/tokens/revoke"
        case .keys: "/keys"
        case .rotateKeys: "/keys/rotate"
        case .faults, .addFault, .clearFaults: "/faults"
        case .journal: "/journal"
        case .pruneTokens: "/tokens/prune"
        case .journalCount: "/journal/count"
        case .arrivals: "/journal/arrivals"
        case .verdicts: "/verdicts"
        case .console: "/console"
        case .timeline: "/timeline"
        case .events: "/events"
        }
    }

    /// What `GET /_authmock/` says of it.
    public var summary: String {
        switch self {
        case .routes: "this list"
        case .reset: "drop all tokens, families, fault rules and the journal; clock back to real time"
        case .clock: "the server clock: now and offsetSeconds"
        case .advanceClock: "{\"seconds\": N}: move the clock forward"
        case .setClock: "{\"offsetSeconds\": N}: set the offset from real time (may be negative)"
        case .tokens: "families, access and refresh tokens with their state (values truncated)"
        case .expireTokens: "{kind, subject, family, jti}: expire the selected tokens now"
        case .revokeTokens: "{kind, subject, family, jti}: revoke the selected tokens"
        case .keys: "signing keys: the algorithm, the current kid and retired ones still verifying"
        case .rotateKeys: "{\"graceSeconds\": N} (optional): a new signing key; the old one verifies for the grace"
        case .faults: "fault rules with how often each fired"
        case .addFault: "{match, times, action}: add a fault rule"
        case .clearFaults: "remove every fault rule"
        case .journal: "?kind=&call=&since=&limit=: recorded requests, oldest first (limit: at most that many)"
        case .pruneTokens: "run a pruning pass now: what it removed, and the totals so far"
        case .journalCount: "?kind=&call=&since=: how many requests match"
        case .arrivals:
            "?kind=: how many requests have arrived, counted as each comes in: one a fault holds, or still being answered, counts before the journal has it"
        case .verdicts: "what the client did on its own, judged by the suite's expectations so far (--judge)"
        case .console: "the live console: the traffic's time line, the verdicts, and buttons for expiry, the clock, revocation and faults (HTML)"
        case .timeline: "the traffic so far as the run report's time line (SVG)"
        case .events: "server-sent events: `journal` with the newest sequence number whenever a request has been recorded"
        }
    }
}

extension JournalFilter {
    /// The query parameters `GET /_authmock/journal` reads this filter from.
    public var query: [String: String] {
        var query: [String: String] = [:]
        if let kinds { query["kind"] = kinds.map(\.rawValue).sorted().joined(separator: ",") }
        if let call { query["call"] = call }
        if let since { query["since"] = String(since) }
        if let limit { query["limit"] = String(limit) }
        return query
    }
}
