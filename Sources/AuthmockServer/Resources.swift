import JWTKit
import AuthmockCore
import Foundation
import HTTPTypes
import Hummingbird

/// The protected API every dialect serves under `/api/`: `/api/me` tells who
/// the token belongs to; anything else echoes the request back, so a test can
/// see what the client sent on each attempt. The dialect judges credentials
/// and encodes answers; the routes are the same for all.
enum Resources {
    /// HEAD comes with GET (ClientRoutes registers it beside every GET).
    static let methods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete]

    static func add(to routes: ClientRoutes, mock: Authmock) {
        let profile = mock.dialect
        routes.issuing(.get, "/api/me") { request, context in
            switch try await profile.authorizeResource(request, context: context, mock: mock) {
            case .failure(let refusal): return .plain(profile.fail(refusal, context: context))
            case .success(let access):
                let grant = access.grant
                // A token's claims never change, so neither does its /api/me
                // answer: encode it once per token, not once per request.
                let body = mock.meAnswers.body(for: grant.tokenID) {
                    let c = grant.claims
                    let me = Me(
                        sub: grant.subject, clientID: c.clientID, scope: c.scope,
                        claims: .init(
                            iss: c.iss.value, sub: c.sub.value, aud: c.aud?.value,
                            exp: Int(c.exp.value.timeIntervalSince1970), iat: Int(c.iat.value.timeIntervalSince1970),
                            jti: c.jti.value, clientID: c.clientID, scope: c.scope, sid: c.sid))
                    return profile.successBody(me)
                }
                return try await profile.finishResource(JSONResponse.response(body), access: access, mock: mock)
            }
        }
        for method in methods {
            routes.issuing(method, "/api/**") { request, context in
                var request = request
                switch try await profile.authorizeResource(request, context: context, mock: mock) {
                case .failure(let refusal): return .plain(profile.fail(refusal, context: context))
                case .success(let access):
                    // Collected (and limited) on arrival already: this reads the kept bytes.
                    let body = String(buffer: try await request.collectBody(upTo: mock.options.maxBodyBytes))
                    let echo = Echo(
                        method: request.method.rawValue, path: request.uri.path,
                        query: request.uri.query, body: body.isEmpty ? nil : body,
                        call: request.headers[.authmockCall], sub: access.grant.subject)
                    return try await profile.finishResource(profile.success(echo, status: .ok, headers: [:]), access: access, mock: mock)
                }
            }
        }
    }

    /// The scope a request needs: what its classification says (GraphQL:
    /// queries `read`, mutations `write`), else by method and path.
    static func requiredScope(_ request: Request, context: AuthmockRequestContext) -> String {
        context.route.requiredScope ?? requiredScope(method: request.method, path: request.uri.path)
    }

    /// The scope of an `/api/` request: `admin` under `/api/admin/`, else
    /// `read` for safe methods and `write` for the rest.
    static func requiredScope(method: HTTPRequest.Method, path: String) -> String {
        if path.hasPrefix("/api/admin/") || path == "/api/admin" { return "admin" }
        return method == .get || method == .head ? "read" : "write"
    }

    /// The standard check: a Bearer access token, valid now, with the scope
    /// the route needs. A refresh token in its place is named as such.
    @inline(__always)
    static func authorizeBearer(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> Result<AccessGrant, Situation> {
        let token: String
        switch context.credential ?? PresentedCredential(request.headers) {
        case .bearer(let value): token = value
        case .none:
            return .failure(.noAccessToken(notBearer: false))
        default:
            return .failure(.noAccessToken(notBearer: true))
        }
        return try await authorize(token: token, request: request, context: context, mock: mock)
    }

    /// Judges an access token string (verified once on arrival by the
    /// observation middleware) and the scope.
    @inline(__always)
    static func authorize(
        token: String, request: Request, context: AuthmockRequestContext, mock: Authmock
    ) async throws -> Result<AccessGrant, Situation> {
        let verification: AccessVerification
        if let known = context.verification {
            verification = known
        } else {
            verification = try await mock.authority.verifyResourceToken(token)
        }
        switch verification {
        case .invalid(let failure, _):
            if failure == .malformed, try await mock.authority.inspectRefreshToken(token) != nil { return .failure(.refreshTokenAsAccessToken) }
            return .failure(.accessToken(failure))
        case .valid(let grant):
            let scope = requiredScope(request, context: context)
            guard grant.grants(scope: scope) else { return .failure(.insufficientScope(required: scope)) }
            return .success(grant)
        }
    }

    struct Me: Encodable {
        struct Claims: Encodable {
            var iss: String, sub: String, aud: [String]?, exp: Int, iat: Int, jti: String, clientID: String, scope: String, sid: String
            enum CodingKeys: String, CodingKey { case iss, sub, aud, exp, iat, jti, scope, sid, clientID = "client_id" }
        }
        var sub: String, clientID: String, scope: String, claims: Claims
        enum CodingKeys: String, CodingKey { case sub, scope, claims, clientID = "client_id" }
    }

    struct Echo: Encodable {
        var method: String, path: String, query: String?, body: String?, call: String?, sub: String
    }
}
