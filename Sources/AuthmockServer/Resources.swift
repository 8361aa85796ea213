import AuthmockCore
import Foundation
import HTTPTypes
import Hummingbird

/// The protected API every profile serves under `/api/`: `/api/me` tells who
/// the token belongs to; anything else echoes the request back, so a test can
/// see what the client sent on each attempt.
enum Resources {
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete]

    static func add(to router: Router<AuthmockRequestContext>, mock: Authmock) {
        router.get("/api/me") { request, context in
            let grant: AccessGrant
            switch await authorize(request, context: context, mock: mock) {
            case .failure(let refusal): return mock.profile.resourceRefusal(refusal, context: context)
            case .success(let granted): grant = granted
            }
            let claims = grant.claims
            return JSONResponse.encode(
                Me(sub: grant.subject, clientID: claims.clientID, scope: claims.scope,
                   claims: .init(iss: claims.iss.value, sub: claims.sub.value, aud: claims.aud.value,
                                 exp: Int(claims.exp.value.timeIntervalSince1970), iat: Int(claims.iat.value.timeIntervalSince1970),
                                 jti: claims.jti.value, clientID: claims.clientID, scope: claims.scope, sid: claims.sid)))
        }
        for method in methods {
            router.on("/api/**", method: method) { request, context in
                var request = request
                switch await authorize(request, context: context, mock: mock) {
                case .failure(let refusal): return mock.profile.resourceRefusal(refusal, context: context)
                case .success(let grant):
                    let body = try await request.collectText(limit: mock.options.maxBodyBytes)
                    return JSONResponse.encode(Echo(
                        method: request.method.rawValue, path: request.uri.path,
                        query: request.uri.query, body: body.isEmpty ? nil : body,
                        call: request.headers[.authmockCall], sub: grant.subject))
                }
            }
        }
    }

    /// The scope a request needs: `admin` under `/api/admin/`, else `read`
    /// for safe methods and `write` for the rest.
    static func requiredScope(method: HTTPRequest.Method, path: String) -> String {
        if path.hasPrefix("/api/admin/") || path == "/api/admin" { return "admin" }
        return method == .get || method == .head ? "read" : "write"
    }

    /// Checks the bearer token and scope, noting the credential for the log.
    static func authorize(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async -> Result<AccessGrant, ResourceRefusal> {
        let token: String
        switch PresentedCredential(request.headers) {
        case .bearer(let value): token = value
        case .none:
            context.notes.credential = "none"
            return .failure(.noBearer(notBearer: false))
        case let other:
            context.notes.credential = "scheme \(other.scheme)"
            return .failure(.noBearer(notBearer: true))
        }
        // The observation middleware already judged the token on arrival.
        let verification: AccessVerification
        if let known = context.notes.verification {
            verification = known
        } else {
            verification = await mock.authority.verifyAccessToken(token)
        }
        switch verification {
        case .invalid(let failure, let jti):
            context.notes.credential = "access \(jti ?? "?") \(failure.rawValue)"
            return .failure(.token(failure))
        case .valid(let grant):
            context.notes.credential = "access \(grant.tokenID) valid"
            let scope = requiredScope(method: request.method, path: request.uri.path)
            guard grant.scopes.contains(scope) else { return .failure(.insufficientScope(required: scope)) }
            return .success(grant)
        }
    }

    struct Me: Encodable {
        struct Claims: Encodable {
            var iss: String, sub: String, aud: [String], exp: Int, iat: Int, jti: String, clientID: String, scope: String, sid: String
            enum CodingKeys: String, CodingKey { case iss, sub, aud, exp, iat, jti, scope, sid, clientID = "client_id" }
        }
        var sub: String, clientID: String, scope: String, claims: Claims
        enum CodingKeys: String, CodingKey { case sub, scope, claims, clientID = "client_id" }
    }

    struct Echo: Encodable {
        var method: String, path: String, query: String?, body: String?, call: String?, sub: String
    }
}
