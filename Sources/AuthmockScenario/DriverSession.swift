import AuthmockCore
public import DriverProtocol
public import Foundation

/// One answer a driver sent, decoded from its JSON line.
public struct DriverAnswer: Sendable {
    public var id: String
    public var ok: Bool
    public var outcome: OutcomeKind?
    public var status: Int?
    public var message: String?
    /// hello: what the driver wraps, and the library's version.
    public var driver: String? = nil
    public var version: String? = nil
    /// hello: the dialects the driver's library can talk to.
    public var profiles: [String]?
    /// hello: optional protocol extensions the driver implements (e.g. `url`).
    public var capabilities: [String]?
    /// hello: seconds before expiry the client renews a token (optional).
    public var renewalMargin: Double? = nil
    /// login (`oidc` extension): the claims of the id token the client accepted.
    public var idTokenClaims: [String: JSONValue]? = nil
    public var line: String
    /// When the runner read it (wall clock): ties untagged requests to calls.
    public var receivedAt: Date
}

/// Why a driver conversation broke: the runner reports these as ERROR.
public enum DriverFailure: Error, CustomStringConvertible, Equatable {
    case exitedEarly(status: String)
    case notJSON(line: String)
    case badAnswer(line: String, problem: String)
    case unanswered(id: String, op: String, seconds: Double)
    case cannotStart(String)

    public var description: String {
        switch self {
        case .exitedEarly(let status): "the driver exited before the scenario finished (\(status))"
        case .notJSON(let line): "the driver printed a line that is not JSON: \(line.prefix(200))"
        case .badAnswer(let line, let problem): "the driver sent an answer the protocol does not allow (\(problem)): \(line.prefix(200))"
        case .unanswered(let id, let op, let seconds): "the driver left \(op) id \(id) unanswered for \(String(format: "%.1f", seconds)) s"
        case .cannotStart(let reason): "the driver could not be started: \(reason)"
        }
    }
}

/// The runner's side of one driver conversation (protocol version 1):
/// numbered JSON lines out, answers matched by id, in any order. A
/// transport (`DriverTransport`) makes one per conversation with the way
/// to send a line, and hands it every line the driver sends back.
public actor DriverChannel {
    private var nextID = 0
    private var waiting: [String: CheckedContinuation<DriverAnswer, any Error>] = [:]
    private var answered: [String: DriverAnswer] = [:]
    private var sentOps: [String: String] = [:]
    /// Why the conversation broke, once it has: every later wait throws it.
    public private(set) var failure: DriverFailure?
    private var stderrTail: [String] = []
    private let send: @Sendable (String) async throws -> Void

    /// `send` delivers one line (a JSON message and its newline) to the driver.
    public init(send: @escaping @Sendable (String) async throws -> Void) {
        self.send = send
    }

    /// Sends the message `make` builds for the next id; returns the id.
    func post(_ make: @Sendable (String) -> RunnerMessage) async throws -> String {
        if let failure { throw failure }
        let id = "\(nextID)"
        nextID += 1
        let message = make(id)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(message)
        sentOps[id] = message.operation.name
        try await send(String(decoding: data, as: UTF8.self) + "\n")
        return id
    }

    /// Whether an id sent is still unanswered.
    public var hasUnanswered: Bool { sentOps.keys.contains { answered[$0] == nil } }

    /// The answer to `id` if it has arrived, without waiting.
    func arrivedAnswer(_ id: String) -> DriverAnswer? { answered[id] }

    /// The answer to `id`, or the reason there will be none by `deadline`.
    func answer(_ id: String, deadline: ContinuousClock.Instant) async throws -> DriverAnswer {
        if let done = answered[id] { return done }
        if let failure { throw failure }
        let start = ContinuousClock.now
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            let seconds = ContinuousClock.now - start
            await self?.timeout(id, after: seconds.inSeconds)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            waiting[id] = continuation
        }
    }

    private func timeout(_ id: String, after seconds: Double) {
        guard let continuation = waiting.removeValue(forKey: id) else { return }
        continuation.resume(throwing: DriverFailure.unanswered(id: id, op: sentOps[id] ?? "?", seconds: seconds))
    }

    /// A line the driver sent (stdout, a WebSocket frame's line).
    public func received(_ line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return }
        // One decode into the protocol's type; what it stumbled on says which rule the line broke.
        let decoded: DriverMessage
        do {
            decoded = try JSONDecoder().decode(DriverMessage.self, from: Data(trimmed.utf8))
        } catch let error as DecodingError {
            return fail(Self.problem(error, line: trimmed))
        } catch {
            return fail(.notJSON(line: trimmed))
        }
        let id = decoded.id
        guard sentOps[id] != nil else { return fail(.badAnswer(line: trimmed, problem: "id \(id) was never sent")) }
        guard answered[id] == nil else { return fail(.badAnswer(line: trimmed, problem: "id \(id) answered twice")) }
        if let margin = decoded.renewalMargin, !(margin.isFinite && margin >= 0 && margin <= 3600) {
            return fail(.badAnswer(line: trimmed, problem: "renewalMargin must be a number of seconds from 0 to 3600"))
        }
        let answer = DriverAnswer(
            id: id, ok: decoded.ok, outcome: decoded.outcome, status: decoded.status,
            message: decoded.message.map { Self.shortened($0, to: 500) }, driver: decoded.driver, version: decoded.version,
            profiles: decoded.profiles,
            capabilities: decoded.capabilities, renewalMargin: decoded.renewalMargin, idTokenClaims: decoded.idTokenClaims,
            line: Self.shortened(trimmed, to: 2_000), receivedAt: Date())
        answered[id] = answer
        waiting.removeValue(forKey: id)?.resume(returning: answer)
    }

    /// Which rule of the protocol a line that did not decode broke: not a
    /// JSON object at all, no string `id`, no boolean `ok`, an `outcome` the
    /// protocol does not have, or another member of the wrong type.
    static func problem(_ error: DecodingError, line: String) -> DriverFailure {
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
        @unknown default: path = []
        }
        switch path.first?.stringValue {
        case nil: return .notJSON(line: line)
        case "id": return .badAnswer(line: line, problem: "no string id")
        case "ok": return .badAnswer(line: line, problem: "no boolean ok")
        case "outcome":
            return .badAnswer(line: line, problem: "outcome must be one of \(OutcomeKind.allCases.map(\.rawValue).joined(separator: ", "))")
        default:
            return .badAnswer(
                line: line,
                problem:
                    "a field has the wrong type (status and renewalMargin are numbers, profiles and capabilities are lists of strings, idTokenClaims an object)"
            )
        }
    }

    /// A driver's text as evidence: a message of megabytes (a body it
    /// echoed) would bury the report, so the rest is counted, not shown.
    /// (Every answer passes here: the UTF-8 length, O(1), settles most.)
    static func shortened(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit, text.count > limit else { return text }
        return text.prefix(limit) + "… (\(text.count - limit) more characters)"
    }

    /// A line of the driver's log (stderr): the last 200 go into the report.
    public func stderr(_ line: String) {
        stderrTail.append(line)
        if stderrTail.count > 200 { stderrTail.removeFirst(stderrTail.count - 200) }
    }

    public var stderrText: String { stderrTail.joined(separator: "\n") }

    /// The driver went away (exited, disconnected): waits end with `exitedEarly`.
    public func ended(status: String) {
        fail(.exitedEarly(status: status))
    }

    public func fail(_ failure: DriverFailure) {
        guard self.failure == nil else { return }
        self.failure = failure
        for (_, continuation) in waiting { continuation.resume(throwing: failure) }
        waiting.removeAll()
    }
}
