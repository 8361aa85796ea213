public import AuthmockCore
public import AuthmockModel
import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1

/// The control API over HTTP, for a server in another process or on another
/// machine (`authmock serve`, a container): what `MockControl` is in-process,
/// as WireMock's `HttpAdminClient` is to its `Admin`. `authmock ctl` sends
/// through it. Each method is one `ControlOperation`.
public struct ControlClient: MockSteering {
    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    public var baseURL: String
    /// Sent as `Authorization: Bearer` when the server requires one (`--admin-token`).
    public var adminToken: String?
    /// How long one operation may take, connecting included: a server that
    /// is not there yet is retried until then.
    public var timeout: Duration

    public init(baseURL: String, adminToken: String? = nil, timeout: Duration = .seconds(10)) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.adminToken = adminToken
        self.timeout = timeout
    }

    /// Sends one operation and returns the answer's body; a control API
    /// error or no answer at all is a `ControlClientError`.
    public func send(_ operation: ControlOperation, query: [String: String] = [:], body: Data? = nil) async throws(ControlClientError) -> Data {
        let target = ControlOperation.prefix + operation.path + Self.queryString(query)
        var request = HTTPClientRequest(url: baseURL + target)
        request.method = HTTPMethod(rawValue: operation.method)
        if let adminToken, !adminToken.isEmpty { request.headers.add(name: "Authorization", value: "Bearer \(adminToken)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let status: Int
        let data: Data
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(timeout / .milliseconds(1))))
            status = Int(response.status.code)
            data = Data(buffer: try await response.body.collect(upTo: 64 << 20))
        } catch {
            throw ControlClientError(operation: "\(operation.method) \(target)", server: baseURL, status: nil, body: "\(error)")
        }
        guard (200..<300).contains(status) else {
            throw ControlClientError(
                operation: "\(operation.method) \(target)", server: baseURL, status: status, body: String(decoding: data, as: UTF8.self))
        }
        return data
    }

    /// Sends `input` as JSON and decodes the answer as `Answer`.
    func send<Answer: Decodable>(
        _ operation: ControlOperation, query: [String: String] = [:], input: (any Encodable)? = nil, as _: Answer.Type = Answer.self
    ) async throws -> Answer {
        let body = try input.map { try JSONEncoder().encode($0) }
        return try ControlWire.decoder.decode(Answer.self, from: try await send(operation, query: query, body: body))
    }

    public func reset() async throws { _ = try await send(.reset) }
    public func clock() async throws -> ClockReading { try await send(.clock) }
    public func advanceClock(seconds: Double) async throws -> ClockReading {
        try await send(.advanceClock, input: ["seconds": seconds])
    }
    public func setClock(offsetSeconds: Double) async throws -> ClockReading {
        try await send(.setClock, input: ["offsetSeconds": offsetSeconds])
    }
    public func tokens() async throws -> TokenSnapshot { try await send(.tokens) }
    public func expire(_ selector: TokenSelector) async throws -> TokenChange { try await send(.expireTokens, input: selector) }
    public func revoke(_ selector: TokenSelector) async throws -> TokenChange { try await send(.revokeTokens, input: selector) }
    public func keys() async throws -> KeysView { try await send(.keys) }
    public func rotateKeys(graceSeconds: Double? = nil) async throws -> KeysView {
        try await send(.rotateKeys, input: ["graceSeconds": graceSeconds].compactMapValues { $0 })
    }
    public func faults() async throws -> [FaultRuleView] { try await send(.faults) }
    public func addFault(_ rule: FaultRule) async throws -> FaultRuleView { try await send(.addFault, input: rule) }
    /// A rule in the control API's JSON shape (docs/control-api.md), as written.
    public func addFault(json: String) async throws -> FaultRuleView {
        try ControlWire.decoder.decode(FaultRuleView.self, from: try await send(.addFault, body: Data(json.utf8)))
    }
    /// How many rules were removed.
    public func clearFaults() async throws -> Int { try await send(.clearFaults, as: [String: Int].self)["removed"] ?? 0 }
    public func journal(_ filter: JournalFilter = JournalFilter()) async throws -> ControlWire.JournalPage {
        try await send(.journal, query: filter.query)
    }
    public func journalCount(_ filter: JournalFilter = JournalFilter()) async throws -> Int {
        try await send(.journalCount, query: filter.query, as: [String: Int].self)["count"] ?? 0
    }
    public func arrivals(_ kinds: Set<RouteKind>) async throws -> Int {
        try await send(.arrivals, query: JournalFilter(kinds: kinds).query, as: [String: Int].self)["count"] ?? 0
    }
    public func prune() async throws -> PruneReport { try await send(.pruneTokens) }
    public func verdicts() async throws -> TrafficVerdicts { try await send(.verdicts) }

    /// `?a=1&b=2`, keys in order, values percent-encoded.
    static func queryString(_ query: [String: String]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#")
        let pairs = query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }
}

/// A control request that failed: the server's error answer, or none at all.
public struct ControlClientError: Error, CustomStringConvertible {
    /// `POST /_authmock/clock/advance`.
    public var operation: String
    public var server: String
    /// nil when no answer came (nothing listening, a timeout).
    public var status: Int?
    /// The answer's body, or what went wrong on the way.
    public var body: String

    public var description: String {
        guard let status else {
            return "no answer from \(server): is `authmock serve` running there? (--url or AUTHMOCK_URL names another server) [\(body)]"
        }
        return "\(operation) answered \(status): \(body)"
    }
}
