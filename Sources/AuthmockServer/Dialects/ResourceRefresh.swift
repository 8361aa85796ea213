import AuthmockCore
import DriverProtocol
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A refresh with no endpoint (`refresh.via: resources`, the
/// dialect). (a) After a 401 for an expired access token, the client repeats
/// the request with its refresh token where the access token goes; the
/// answer is served normally and carries a new access token in a response
/// header. (b) With `rotate_every: N`, every Nth successful answer of a login
/// carries a new access token too, and older ones stop working after the
/// rotation grace window. The header always carries the newest token of the
/// login, so out-of-order answers never hand out an older one.
struct ResourceRefresh: Sendable {
    /// The request header the refresh token comes in, and its scheme (optional there).
    let location: HTTPField.Name
    let scheme: String?
    /// The response header of a new access token, and its scheme.
    let renewed: HTTPField.Name
    let renewedScheme: String?
    let rotateEvery: Int?
    let graceSeconds: Int
    private let rotations = RotationState()

    /// nil unless the file refreshes on resources. The loader has checked
    /// both header names; `rotation_header` (checked too) names another
    /// response header, `Bearer` only in `Authorization`.
    init?(_ refresh: DialectDescription.Refresh, options: DialectOptions) {
        guard refresh.onResources, case .header(let name, let scheme) = refresh.refreshToken, let location = HTTPField.Name(name) else { return nil }
        self.location = location
        self.scheme = scheme
        let file = refresh.renewedHeader
        if let setting = options.rotationHeader, let name = HTTPField.Name(setting) {
            renewed = name
            renewedScheme = name == .authorization ? "Bearer" : nil
        } else {
            renewed = HTTPField.Name(file.name) ?? .authorization
            renewedScheme = file.scheme
        }
        rotateEvery = options.rotateEvery
        graceSeconds = options.rotationGraceSeconds
    }

    /// The token in the header, with or without its scheme (`Bearer x` or
    /// `x`). Read twice on every resource request (classified, then
    /// authorized): byte-wise, as `PresentedCredential` reads it, since
    /// Foundation's trimming of a JWT tripled the cost of a request.
    func presentedToken(_ headers: HTTPFields) -> Substring? {
        guard var value = headers.value(of: location)?.trimmedSpaces, !value.isEmpty else { return nil }
        if let scheme, let rest = value.afterScheme(scheme) { value = rest }
        return value.isEmpty ? nil : value
    }

    /// The access token an answer renews in its header (a proxy learns it there).
    func renewedToken(_ headers: HTTPFields) -> String? {
        guard var value = headers[renewed]?.trimmedSpaces, !value.isEmpty else { return nil }
        if let renewedScheme, let rest = value.afterScheme(renewedScheme) { value = rest }
        return value.isEmpty ? nil : String(value)
    }

    /// A refresh token on a resource request: an opaque token (a JWT has three
    /// dot-separated parts) where the access token goes.
    func presentedRefreshToken(_ headers: HTTPFields) -> String? {
        guard let token = presentedToken(headers), !token.utf8.contains(UInt8(ascii: ".")) else { return nil }
        return String(token)
    }

    func authorize(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> Result<ResourceAccess, Situation> {
        guard let token = presentedRefreshToken(request.headers) else {
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

    func finish(_ response: Response, access: ResourceAccess, mock: Authmock) async throws -> ClientAnswer {
        var answer = ClientAnswer(response: response, issued: access.issued)
        let family = access.grant.claims.sid
        if answer.issued == nil, let every = rotateEvery, !family.isEmpty, rotations.countSuccess(family: family) % every == 0,
            let issued = try await mock.authority.rotateAccessToken(familyID: family)
        {
            answer.issued = issued
            rotations.record(family: family, token: issued.accessToken, issuedAt: mock.clock.now())
            try await mock.authority.supersedeAccessTokens(family: family, keep: issued.accessKey, graceSeconds: graceSeconds)
        }
        if answer.issued != nil, let newest = rotations.newest(family: family) {
            answer.response.headers[renewed] = renewedScheme.map { "\($0) \(newest)" } ?? newest
        }
        return answer
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
