import AuthmockModel
import Foundation

/// Short names for a case's tokens, by login and generation: `A1`, `A2` for
/// the first login's access tokens as they are issued, `R1`, `R2` for its
/// refresh tokens, `L2.A1` once a second login exists. Raw ids (`jti`s) are
/// time-ordered and all begin alike within a run, so "which token did this
/// request carry" can only be read from names like these. A token the case's
/// journal never saw issued (minted by a step, forged) is `Ax1`, `Rx1`, ...
/// in order of first sight; a token without a readable id is `?`.
public struct TokenLabels: Sendable {
    private var names: [String: String] = [:]
    /// Token id -> the login (1, 2, ...) it belongs to, for tokens the journal saw issued.
    private var loginOfToken: [String: Int] = [:]
    /// Logins in order of their first issued token.
    public private(set) var logins = 0

    public init() {}

    /// `families`: the token core's login of each token, where known (a
    /// refresh that issued tokens then belongs to its login even when the
    /// request that carried the old one was not journaled).
    init(_ entries: [JournalEntry], accessFamily: [String: String] = [:], refreshFamily: [String: String] = [:]) {
        var loginOf: [String: Int] = [:]  // token id -> login number
        var loginOfFamily: [String: Int] = [:]
        var generations: [Int: (access: Int, refresh: Int)] = [:]
        var issued: [(id: String, kind: PresentedToken.Kind, login: Int, generation: Int)] = []
        var external = (access: 0, refresh: 0)
        var externalNames: [String: String] = [:]

        func login(for entry: JournalEntry) -> Int {
            let family = entry.issuedAccess.flatMap { accessFamily[$0] } ?? entry.issuedRefresh.flatMap { refreshFamily[$0] }
            if let family, let known = loginOfFamily[family] { return known }
            // A sign-in starts a login; anything else continues the login of what it presented.
            let presented = entry.kind == .login ? nil : (entry.refreshToken?.id ?? entry.accessToken?.id).flatMap { loginOf[$0] }
            let number = presented ?? (logins + 1)
            logins = max(logins, number)
            if let family { loginOfFamily[family] = number }
            return number
        }
        for entry in entries.sorted(by: { $0.seq < $1.seq }) {
            for token in [entry.accessToken, entry.refreshToken].compactMap({ $0 }) {
                guard let id = token.id, loginOf[id] == nil, externalNames[id] == nil else { continue }
                if token.kind == .access {
                    external.access += 1
                    externalNames[id] = "Ax\(external.access)"
                } else {
                    external.refresh += 1
                    externalNames[id] = "Rx\(external.refresh)"
                }
            }
            guard entry.issuedAccess != nil || entry.issuedRefresh != nil else { continue }
            let number = login(for: entry)
            var generation = generations[number] ?? (0, 0)
            if let id = entry.issuedAccess, loginOf[id] == nil {
                generation.access += 1
                loginOf[id] = number
                issued.append((id, .access, number, generation.access))
            }
            if let id = entry.issuedRefresh, loginOf[id] == nil {
                generation.refresh += 1
                loginOf[id] = number
                issued.append((id, .refresh, number, generation.refresh))
            }
            generations[number] = generation
        }
        loginOfToken = loginOf
        for token in issued {
            let name = "\(token.kind == .access ? "A" : "R")\(token.generation)"
            names[token.id] = logins > 1 ? "L\(token.login).\(name)" : name
        }
        for (id, name) in externalNames where names[id] == nil { names[id] = name }
    }

    /// The login a token was issued in (the token core's, where it knew; else read from the journal).
    func login(of id: String?) -> Int? { id.flatMap { loginOfToken[$0] } }

    /// The label of a token id; `?` for none.
    public func label(_ id: String?) -> String {
        guard let id else { return "?" }
        return names[id] ?? "?"
    }
}

/// One journal entry as the JSON report and the picture read it: what the
/// request carried and what it got, with token labels beside the raw ids
/// (docs/report.schema.json, `cases[].entries`).
public struct ReportedEntry: Sendable, Codable, Equatable {
    public struct Token: Sendable, Codable, Equatable {
        public var kind: String
        /// `A2`, `R1`, `L2.A1` (`TokenLabels`).
        public var label: String
        /// The raw id: an access token's `jti`, a refresh token's id.
        public var id: String?
        /// Its state on arrival (`valid`, `expired`, `rotated-reuse`, ...); nil for an issued token.
        public var state: String?
    }

    public var seq: Int
    /// Seconds since the case began (wall clock), at arrival.
    public var at: Double
    /// Seconds the server took, holds and delays included.
    public var seconds: Double
    public var method: String
    public var path: String
    /// `login`, `refresh`, `resource`, ...
    public var kind: String
    /// The application call it belongs to (`c1`), by its header or attributed by timing.
    public var call: String?
    /// True when the call was attributed by timing: the request lost the call header.
    public var attributed: Bool?
    /// Another host's name, for a request to a third party.
    public var host: String?
    public var operation: String?
    /// The Authorization scheme sent (`Bearer`, `Basic`, `none`, ...).
    public var scheme: String
    public var presented: [Token]
    public var issued: [Token]
    /// 0: the connection closed without an answer.
    public var status: Int
    public var code: String?
    /// Which of the dialect's error answers it was (docs/dialects.md's keys); nil for a success.
    public var situation: String?
    /// The fault rule that fired on it (its number in the case).
    public var fault: Int?
    /// What that rule did (`held 300 ms, then answered by the route`).
    public var faultAction: String?
    /// False when the client never got the answer (a dropped connection).
    public var delivered: Bool
    /// True when it arrived after the verdict read the journal (`judgedThrough`): evidence only.
    public var late: Bool?

    init(
        _ entry: JournalEntry, start: Date, labels: TokenLabels, attributedTo: String? = nil, faults: [Int: String] = [:], late: Bool = false
    ) {
        seq = entry.seq
        at = (entry.realTime.timeIntervalSince(start) * 1000).rounded() / 1000
        seconds = (entry.durationMs).rounded() / 1000
        method = entry.method
        path = entry.path
        kind = entry.kind.rawValue
        call = entry.call ?? attributedTo
        attributed = entry.call == nil && attributedTo != nil ? true : nil
        host = Observation.isForeign(entry) ? entry.host : nil
        operation = entry.operation
        scheme = entry.scheme
        presented = [entry.accessToken, entry.refreshToken].compactMap { $0 }.map {
            Token(kind: $0.kind.rawValue, label: labels.label($0.id), id: $0.id, state: $0.state.rawValue)
        }
        issued = [("access", entry.issuedAccess), ("refresh", entry.issuedRefresh)].compactMap { kind, id in
            id.map { Token(kind: kind, label: labels.label($0), id: $0, state: nil) }
        }
        status = entry.status
        code = entry.errorCode
        situation = entry.situation
        fault = entry.fault
        faultAction = entry.fault.flatMap { faults[$0] }
        delivered = !entry.undelivered
        self.late = late ? true : nil
    }
}
