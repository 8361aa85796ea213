import DriverProtocol
public import AuthmockCore
import Foundation
public import HTTPTypes
public import Hummingbird
import NIOCore
import Synchronization

/// No refresh endpoint. (a) After a 401 for an expired access token, the
/// client repeats the request with its refresh token in `Authorization`;
/// the answer is served normally and carries a new access token in a
/// response header. (b) With `rotate_every: N`, every Nth successful answer
/// of a login carries a new access token too, and older ones stop working
/// after the rotation grace window. The header always carries the newest
/// token of the login, so out-of-order answers never hand out an older one.
public struct HeaderRotationProfile: PlainErrorProfile {
    public let name = ProfileName.headerRotation.rawValue
    public let summary = "No refresh endpoint: send the refresh token in Authorization, get the new access token in a response header"
    let header: HTTPField.Name
    let rotateEvery: Int?
    let graceSeconds: Int
    private let rotations = RotationState()

    init(options: ProfileOptions) {
        header = HTTPField.Name(options.rotationHeader) ?? .authorization
        rotateEvery = options.rotateEvery
        graceSeconds = options.rotationGraceSeconds
    }

    public func addRoutes(to routes: ClientRoutes, mock: Authmock) {
        addLogin(to: routes, mock: mock)
    }

    /// A browser interceptor must read the renewed token.
    public var exposedResponseHeaders: [String] { [header.rawName] }

    /// The token in `Authorization`, with or without `Bearer `.
    static func presentedToken(_ headers: HTTPFields) -> String? {
        guard var value = headers.value(of: .authorization)?.trimmedSpaces, !value.isEmpty else { return nil }
        if value.lowercased().hasPrefix("bearer ") { value = value.dropFirst(7).trimmedSpaces }
        return value.isEmpty ? nil : String(value)
    }

    /// A JWT has three dot-separated parts; refresh tokens are opaque.
    static func isRefreshToken(_ token: String) -> Bool { !token.contains(".") }

    public func classify(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        var route = BackendDialect.classify(path: path, body: body, refreshPath: nil)
        if route.kind == .resource, let token = Self.presentedToken(headers), Self.isRefreshToken(token) {
            route = .init(kind: .refresh, refreshToken: token)
        }
        return route
    }

    public func authorizeResource(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> Result<ResourceAccess, Situation> {
        guard let token = Self.presentedToken(request.headers), Self.isRefreshToken(token) else {
            return try await Resources.authorizeBearer(request, context: context, mock: mock).map { ResourceAccess(grant: $0) }
        }
        // The refresh token stays the same here; only the access token is
        // renewed. A store failure is the documented 503 (ErrorMiddleware),
        // never "sign in again": that is the very bug the suite judges.
        let issued: IssuedTokens
        switch try await mock.authority.refresh(token, clientID: nil, rotate: false) {
        case .failure(let failure): return .failure(.refreshToken(failure))
        case .success(let tokens): issued = tokens
        }
        // Not verified through the store: a concurrent refresh of the same
        // login may already have superseded it, and this request was valid.
        guard let grant = await mock.authority.grant(ofIssued: issued) else {
            throw IssuedTokenUnreadable()
        }
        if let family = issued.familyID {
            rotations.record(family: family, token: issued.accessToken, issuedAt: mock.clock.now())
            try await mock.authority.supersedeAccessTokens(family: family, keep: issued.accessKey, graceSeconds: graceSeconds)
        }
        let scope = Resources.requiredScope(request, context: context)
        guard grant.grants(scope: scope) else { return .failure(.insufficientScope(required: scope)) }
        return .success(ResourceAccess(grant: grant, issued: issued))
    }

    public func finishResource(_ response: Response, access: ResourceAccess, mock: Authmock) async throws -> ClientAnswer {
        var answer = ClientAnswer(response: response, issued: access.issued)
        let family = access.grant.claims.sid
        if answer.issued == nil, let every = rotateEvery, !family.isEmpty, rotations.countSuccess(family: family) % every == 0,
            let issued = try await mock.authority.reissueAccessToken(familyID: family)
        {
            answer.issued = issued
            rotations.record(family: family, token: issued.accessToken, issuedAt: mock.clock.now())
            try await mock.authority.supersedeAccessTokens(family: family, keep: issued.accessKey, graceSeconds: graceSeconds)
        }
        if answer.issued != nil, let newest = rotations.newest(family: family) {
            answer.response.headers[header] = header == .authorization ? "Bearer \(newest)" : newest
        }
        return answer
    }

    public func answer(to situation: Situation) -> ErrorAnswer {
        plainAnswer(to: situation)
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        BackendDialect.loginHints(baseURL: baseURL, directory: directory) + [
            "Refresh (after a 401, repeat the request with the refresh token; the new access token comes back in \(header)):",
            "  curl -si -H \"Authorization: Bearer $REFRESH_TOKEN\" \(baseURL)/api/me",
        ]
    }
}

/// A token this server just signed does not verify: a bug, answered 500.
private struct IssuedTokenUnreadable: Error {}

/// Per login: successful answers counted, and the newest access token.
private final class RotationState: Sendable {
    private struct Family {
        var successes = 0
        var newest: String?
        var newestIssuedAt = Date.distantPast
    }
    private let families = Mutex([String: Family]())

    func countSuccess(family: String) -> Int {
        families.withLock { families in
            families[family, default: Family()].successes += 1
            return families[family]!.successes
        }
    }

    /// Keeps `token` only if it is not older than the newest one known.
    func record(family: String, token: String, issuedAt: Date) {
        families.withLock { families in
            var entry = families[family, default: Family()]
            if issuedAt >= entry.newestIssuedAt {
                entry.newest = token
                entry.newestIssuedAt = issuedAt
            }
            families[family] = entry
        }
    }

    func newest(family: String) -> String? {
        families.withLock { $0[family]?.newest }
    }
}
