import AuthmockCore
import AuthmockServer
import Foundation

/// A call the runner made, and what the driver answered.
struct CallRecord: Sendable {
    var call: String
    var driverID: String
    var spec: CallSpec
    var answer: DriverAnswer?

    var outcome: String { answer?.outcome ?? (answer == nil ? "unanswered" : (answer!.ok ? "ok" : "unknown")) }

    var summary: CallOutcome {
        CallOutcome(call: call, request: "\(spec.method) \(spec.path)", outcome: outcome, status: answer?.status, message: answer?.message)
    }
}

/// Judges expectations against what the server saw and the application got.
struct Evaluator {
    let entries: [JournalEntry]
    let calls: [CallRecord]
    let families: [String: String]
    let start: Date

    /// Seconds of slack before a delivered token counts as known to the client.
    static let deliveryMargin = 0.05

    /// The host name the server has for third parties (`//foreign/` paths).
    static let foreignHost = "localhost"

    func isForeign(_ entry: JournalEntry) -> Bool { entry.host?.hasPrefix(Self.foreignHost + ":") == true }

    var resources: [JournalEntry] { entries.filter { $0.kind == .resource && !isForeign($0) } }
    var refreshes: [JournalEntry] { entries.filter { $0.kind == .refresh } }

    func lines(_ selected: [JournalEntry], limit: Int = 12) -> [String] {
        var out = selected.prefix(limit).map { describe($0, start: start) }
        if selected.count > limit { out.append("... and \(selected.count - limit) more") }
        return out
    }

    func seqs(_ selected: [JournalEntry], limit: Int = 10) -> String {
        let list = selected.prefix(limit).map { "#\($0.seq)" }.joined(separator: ", ")
        return selected.count > limit ? list + ", ..." : list
    }

    /// Attempts of an application call: its requests to the API, including
    /// a header-rotation refresh, which is the call repeated with the refresh token.
    func attempts(of call: String) -> [JournalEntry] {
        entries.filter { $0.call == call && !isForeign($0) && ($0.kind == .resource || $0.kind == .refresh && $0.path.hasPrefix("/api/")) }
    }

    func evaluate(_ expect: Expectations) -> [Finding] {
        var findings: [Finding] = []
        func add(_ key: String, _ passed: Bool, _ message: String, _ evidence: [String] = []) {
            findings.append(Finding(expectation: key, passed: passed, message: message, evidence: passed ? [] : evidence))
        }
        let reused = refreshes.filter { $0.refreshToken?.state == "rotated-reuse" }

        if let range = expect.refreshes {
            let seen = refreshes
            var message = "expected \(range.text) refresh request\(range.max == 1 ? "" : "s"), saw \(seen.count)"
            if !seen.isEmpty { message += ": journal \(seqs(seen))" }
            if !range.admits(seen.count) && !reused.isEmpty {
                message += "; \(reused.count) of them presented an already rotated refresh token, so reuse detection revoked the login"
            }
            add("refreshes", range.admits(seen.count), message, lines(seen))
        }
        if let range = expect.logins {
            let seen = entries.filter { $0.kind == .login }
            add("logins", range.admits(seen.count), "expected \(range.text) sign-in requests, saw \(seen.count)", lines(seen))
        }
        for (kind, count) in expect.outcomes.sorted(by: { $0.key < $1.key }) {
            let matching = calls.filter { $0.outcome == kind }
            let others = calls.filter { $0.outcome != kind }
            let evidence = calls.map { record in
                "\(record.call) \(record.spec.method) \(record.spec.path) -> \(record.outcome)"
                    + (record.answer?.status.map { " \($0)" } ?? "") + (record.answer?.message.map { " (\($0))" } ?? "")
            }
            switch count {
            case .all:
                var message = "expected every call (\(calls.count)) to end \(kind), \(matching.count) did"
                if !others.isEmpty {
                    let tally = Dictionary(grouping: others, by: \.outcome).map { "\($0.value.count) \($0.key)" }.sorted().joined(separator: ", ")
                    message += "; the others: \(tally)"
                }
                add("outcomes.\(kind)", others.isEmpty && !calls.isEmpty, message, evidence)
            case .exactly(let n):
                add("outcomes.\(kind)", matching.count == n, "expected \(n) call\(n == 1 ? "" : "s") to end \(kind), \(matching.count) did", evidence)
            }
        }
        if let range = expect.attemptsPerCall {
            let broken = calls.filter { !range.admits(attempts(of: $0.call).count) }
            let message = broken.isEmpty
                ? "every call made \(range.text) attempts"
                : "expected \(range.text) attempts per call; " + broken.prefix(5).map { "\($0.call) made \(attempts(of: $0.call).count)" }.joined(separator: ", ")
            add("attempts_per_call", broken.isEmpty, message, lines(broken.flatMap { attempts(of: $0.call) }))
        }
        if let range = expect.refreshTokenReuse {
            add("refresh_token_reuse", range.admits(reused.count),
                "expected \(range.text) refresh requests with an already rotated refresh token, saw \(reused.count)"
                    + (reused.isEmpty ? "" : ": journal \(seqs(reused)); reuse detection revoked the login"), lines(reused))
        }
        if let range = expect.staleTokenUses {
            let stale = staleUses()
            add("stale_token_uses", range.admits(stale.count),
                "expected \(range.text) requests with an access token older than one the client had already received, saw \(stale.count)"
                    + (stale.isEmpty ? "" : ": journal \(seqs(stale))"), lines(stale))
        }
        if let range = expect.foreignRequestsWithToken {
            let leaked = entries.filter { isForeign($0) && $0.scheme != "none" }
            add("foreign_requests_with_token", range.admits(leaked.count),
                "expected \(range.text) requests to another host carrying Authorization, saw \(leaked.count)", lines(leaked))
        }
        if let max = expect.maxRequests {
            add("max_requests", entries.count <= max, "expected at most \(max) requests in all (a loop guard), saw \(entries.count)", lines(entries))
        }
        if expect.sameBodyOnRetry == true {
            let broken = calls.filter { Set(attempts(of: $0.call).map { $0.bodySHA256 ?? "(no body)" }).count > 1 }
            add("same_body_on_retry", broken.isEmpty,
                broken.isEmpty ? "every retry carried the byte-identical body"
                    : "the body changed between attempts of " + broken.map(\.call).joined(separator: ", ") + " (compare bodySHA256 and bodyBytes)",
                broken.flatMap { attempts(of: $0.call) }.map { describe($0, start: start) + " body=\($0.bodyBytes) bytes sha256=\(($0.bodySHA256 ?? "none").prefix(12))" })
        }
        if let rule = expect.everyAttempt {
            let broken = resources.filter { rule == .bearer ? $0.scheme != "Bearer" : $0.scheme == "none" }
            add("every_attempt", broken.isEmpty,
                rule == .bearer
                    ? "expected `Authorization: Bearer <token>` on every request to the API, \(broken.count) had another scheme or none"
                    : "expected an Authorization header on every request to the API, \(broken.count) had none",
                lines(broken))
        }
        if let minimum = expect.retryAfterSeconds {
            var broken: [JournalEntry] = []
            for record in calls {
                let tries = attempts(of: record.call)
                for (first, next) in zip(tries, tries.dropFirst()) where [429, 503].contains(first.status)
                    && next.virtualTime.timeIntervalSince(first.virtualTime) + 0.05 < minimum
                {
                    broken.append(contentsOf: [first, next])
                }
            }
            add("retry_after", broken.isEmpty,
                broken.isEmpty ? "every retry after 429/503 waited at least \(minimum) s"
                    : "expected at least \(minimum) s between an answer with Retry-After and the next attempt; journal \(seqs(broken))",
                lines(broken))
        }
        if expect.retriedWithNewToken == true {
            var broken: [JournalEntry] = []
            for record in calls {
                let tries = attempts(of: record.call)
                guard tries.count >= 2, tries.dropLast().contains(where: { $0.status == 401 }) else { continue }
                if tries.last?.accessToken?.id == tries.first?.accessToken?.id { broken.append(contentsOf: tries) }
            }
            add("retried_with_new_token", broken.isEmpty,
                broken.isEmpty ? "every retry after a 401 carried a new access token" : "a call was retried with the same access token that got 401",
                lines(broken))
        }
        return findings
    }

    /// Requests to the API carrying an access token that was older than one
    /// the server had already delivered to the client, for the same login.
    func staleUses() -> [JournalEntry] {
        struct Issue { var jti: String; var seq: Int; var deliveredAt: Date? }
        var issuesByFamily: [String: [Issue]] = [:]
        var issueSeq: [String: Int] = [:]
        for entry in entries {
            guard let jti = entry.issuedAccess, let family = families[jti] else { continue }
            let delivered = entry.undelivered || entry.status >= 300 ? nil : entry.realTime.addingTimeInterval(entry.durationMs / 1000 + Self.deliveryMargin)
            issuesByFamily[family, default: []].append(Issue(jti: jti, seq: entry.seq, deliveredAt: delivered))
            issueSeq[jti] = entry.seq
        }
        return resources.filter { entry in
            guard let jti = entry.accessToken?.id, let family = families[jti], let mine = issueSeq[jti] else { return false }
            return issuesByFamily[family, default: []].contains { issue in
                issue.seq > mine && (issue.deliveredAt.map { $0 < entry.realTime } ?? false)
            }
        }
    }
}
