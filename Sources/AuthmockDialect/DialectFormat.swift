public import AuthmockFileFormat
import AuthmockCore
import AuthmockServer
import DriverProtocol
import Foundation
import HTTPTypes
import Yams

/// The dialect file format: the tables the checker, `authmock schema
/// --dialect` and docs/dialects.md's reference are made from.
public enum DialectFormat {
    static let methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]

    static var location: ObjectSpec {
        ObjectSpec(
            "token location",
            [
                Field("field", .string(), "a body field; dots reach into a JSON object (`auth.refreshToken`)"),
                Field("header", .string(), "a request header"),
                Field("scheme", .string(), "with `header`: the word before the token (`Bearer`); without it the header is the token"),
                Field("cookie", .string(), "a cookie"),
                Field("query", .string(), "a query parameter of the URL (`?refresh_token=...`)"),
            ])
    }

    static func endpoint(_ name: String, _ extra: [Field], pathRequired: Bool = true) -> ObjectSpec {
        ObjectSpec(
            name,
            [
                Field("method", .string(oneOf: methods), "the HTTP method (default POST)"),
                Field(
                    "path", .string(), required: pathRequired,
                    "the path, from the server's root (`/v2/session`)\(pathRequired ? "" : "; required unless `via` is resources")"),
                Field(
                    "match",
                    .object(
                        ObjectSpec(
                            "match",
                            [
                                Field("query", .map(.string()), "query parameters and their values (`grant_type: password`)"),
                                Field("headers", .map(.string()), "headers and their values (`X-Amz-Target: ...InitiateAuth`)"),
                                Field("body", .map(.string()), "body fields and their values (`AuthFlow: REFRESH_TOKEN_AUTH`)"),
                            ])),
                    "what tells this endpoint's requests apart where sign-in and refresh share a method and path; a client sends it"),
                Field(
                    "encoding", .string(oneOf: DialectDescription.BodyEncoding.allCases.map(\.rawValue)), "the request body: json (default) or form"),
                Field(
                    "also_accepts", .string(oneOf: DialectDescription.BodyEncoding.allCases.map(\.rawValue)),
                    "another body the server reads too, told apart by `Content-Type` (Google's token endpoint takes a form or JSON); clients send `encoding`"
                ),
            ] + extra)
    }

    static var answer: ObjectSpec {
        ObjectSpec(
            "answer",
            [
                Field("status", .integer(minimum: 100), required: true, "the HTTP status"),
                Field("code", .oneOf([.integer(), .string()]), required: true, "said where the error body has `{code}`: a string, or a number"),
                Field("message", .string(), required: true, "said where the error body has `{message}`, with a detail after a colon"),
                Field("headers", .map(.string()), "headers the answer carries, e.g. a `WWW-Authenticate` challenge"),
                Field(
                    "detail", .string(),
                    "said after the message in place of the situation's own detail (the missing field's name, the scope needed); empty: nothing is said"
                ),
                Field("when", .string(), "when the backend answers this, for `authmock errors` (default: the situation's description)"),
                Field("body", .any, "this answer's own JSON body, in place of `errors.body`, with the same placeholders"),
            ])
    }

    static var tokens: ObjectSpec {
        ObjectSpec(
            "tokens",
            [
                Field("status", .integer(minimum: 200), "the HTTP status (default 200)"),
                Field("headers", .map(.string()), "headers the answer carries; values may hold placeholders"),
                Field("body", .any, required: true, "the JSON answer, any shape, with placeholders such as `{access_token}`"),
            ])
    }

    static var jwt: ObjectSpec {
        ObjectSpec(
            "jwt",
            [
                Field(
                    "issuer_path", .string(),
                    "added to the server's URL in `iss` (`/us-east-1_authmock`: the user pool's URL); the JWKS is served at `iss` + `/.well-known/jwks.json` too"
                ),
                Field(
                    "jwks_path", .string(),
                    "where the JWKS is served, where the vendor publishes it elsewhere than under the issuer (`/realms/NAME/protocol/openid-connect/certs`)"
                ),
                Field(
                    "access_left_out", .array(.string(oneOf: ["aud", "nbf"])),
                    "standard claims access tokens leave out: `aud` (resources then do not require it) and `nbf`, for a backend whose access tokens carry neither"
                ),
                Field(
                    "access_claims", .map(.string()),
                    "claims added to every access token (`token_use: access`); `{user}` and `{client_id}` are replaced"),
                Field(
                    "refresh_claims", .map(.string()),
                    "given: refresh tokens are JWTs (HS512, with a key of the server's own) with these claims added (`typ: Refresh`); `{user}` and `{client_id}` are replaced; without it they are opaque"
                ),
                Field(
                    "id_token_claims", .map(.string()),
                    "given: every sign-in and refresh also issues an id token (`{id_token}`, `aud` the client) with these claims added; `{user}` and `{client_id}` are replaced"
                ),
            ])
    }

    /// The settings a dialect file may give, as in a scenario's `server:`.
    static var settings: ObjectSpec { ServerSettings.spec("settings") }

    public static var dialect: ObjectSpec {
        ObjectSpec(
            "dialect",
            [
                Field("dialect", .string(), required: true, "the dialect's name: lower-case letters, digits and dashes; not a built-in dialect's"),
                Field("summary", .string(), "one sentence on the backend, printed at start"),
                Field(
                    "sign_in",
                    .object(
                        endpoint(
                            "sign_in",
                            [
                                Field("username", .string(), "the field holding the user name (default username)"),
                                Field("password", .string(), "the field holding the password (default password)"),
                                Field(
                                    "default_user", .string(),
                                    "the user name of the account the server starts with (default alice; its password is wonderland), "
                                        + "where the backend's user names have a shape of their own: `alice@example.com` for a sign-in by email"
                                ),
                            ])), required: true, "where a user signs in with a name and a password"),
                Field(
                    "refresh",
                    .object(
                        endpoint(
                            "refresh",
                            [
                                Field(
                                    "via", .string(oneOf: DialectDescription.Refresh.Via.allCases.map(\.rawValue)),
                                    "endpoint (default): a request of its own to `path`; resources: no endpoint, the refresh token rides on any resource request in the header the access token goes in (its scheme optional), an opaque token there being a refresh token, and the answer carries a new access token in `renewed_access_token`"
                                ),
                                Field(
                                    "renewed_access_token", .object(location),
                                    "with `via: resources`: the response header of a new access token (default `{header: Authorization, scheme: Bearer}`; the `rotation_header` setting names another)"
                                ),
                                Field("refresh_token", .object(location), required: true, "where the refresh token travels"),
                                Field(
                                    "access_token", .object(location), "where the (maybe expired) access token travels too, when the backend wants it"
                                ),
                                Field(
                                    "access_token_copy", .object(location),
                                    "a second place the same access token travels (`Authorization: Bearer` beside a body field); a refresh whose copies differ is refused"
                                ),
                                Field("tokens", .object(tokens), "the refresh's own answer, where it differs from sign-in's `tokens`"),
                                Field(
                                    "unrotated_refresh_token", .string(oneOf: DialectDescription.UnrotatedRefreshToken.allCases.map(\.rawValue)),
                                    "with rotation off, what the refresh answer's `{refresh_token}` says: left_out (default: its member is left out, the client keeps its own) or repeated (the token the client sent)"
                                ),
                                Field(
                                    "refresh_token_pattern", .string(),
                                    "a regular expression the backend's refresh tokens match whole; a refresh token that does not is refused before any lookup, `refresh_token_malformed` (GoTrue's 400 `validation_failed`). It must take authmock's own refresh tokens: 60 base64url characters, or a JWT with `jwt.refresh_claims`"
                                ),
                            ], pathRequired: false)), required: true, "where the client exchanges its refresh token"),
                Field("tokens", .object(tokens), required: true, "the answer to a sign-in or refresh that issued tokens"),
                Field(
                    "sign_out",
                    .object(
                        endpoint(
                            "sign_out",
                            [
                                Field("refresh_token", .object(location), "where the refresh token that names the login travels"),
                                Field(
                                    "access_token", .object(location),
                                    "where the access token that names the login travels (give this or `refresh_token`)"),
                                Field("status", .integer(minimum: 200), "the answer's status: 204 (default), or another 2xx, with or without `body`"),
                                Field("body", .any, "the answer's JSON body (`{}`); none by default"),
                                Field("headers", .map(.string()), "headers the answer carries"),
                                Field(
                                    "refuses_dead_token", .boolean,
                                    "true: a refresh token that is no longer good (unknown, expired, revoked, rotated) gets the refresh refusal for why, as a blacklist view that validates the token first does; false (default): a success, as RFC 7009 asks"
                                ),
                            ])),
                    "the backend's sign-out (token revocation) endpoint: the login the token names ends at the server, every token of it refused from then on"
                ),
                Field(
                    "errors",
                    .object(
                        ObjectSpec(
                            "errors",
                            [
                                Field("body", .any, required: true, "the JSON body of every error answer, with `{code}`, `{message}` and `{status}`"),
                                Field(
                                    "answers", .map(.object(answer), keys: Situation.answerKeys.map(\.key)), required: true,
                                    "the answer per situation or group"),
                            ])), required: true, "how the backend says no"),
                Field(
                    "resources",
                    .object(ObjectSpec("resources", [Field("body", .any, required: true, "the JSON around the resource's own answer, `{data}`")])),
                    "for backends that wrap every answer: the body of a successful resource answer (`/api/...`)"),
                Field("settings", .object(settings), "server settings this backend implies (lifetimes, rotation), as in a scenario's `server:`"),
                Field(
                    "jwt", .object(jwt),
                    "the backend's JWTs, where they differ from authmock's (an issuer path, claims, an id token beside every access token)"),
                Field(
                    "bearer_scheme", .string(oneOf: ["exact"]),
                    "`exact`: the API takes only `Authorization: Bearer` as written, and `bearer` is no credential, as a backend that compares the scheme's bytes; by default any case"
                ),
                Field(
                    "client_id", .string(),
                    "the body field of sign-in and refresh requests that names the app client (`ClientId` in a JSON body, a form's `client_id`): tokens go to that client, an unknown one is refused (`client_unknown`), and a refresh token presented by another client is refused (`refresh_token_of_another_client`); without it the backend names none, and tokens go to the first configured client"
                ),
                Field(
                    "refresh_on", .string(oneOf: DialectDescription.RefreshSignal.allCases.map(\.rawValue)),
                    "what tells a client its access token needs refreshing: `status`, any answer of `access_token_expired`'s status (a revoked token's 401 too: refresh, and sign in again only if the refresh is refused); `code`, only that answer's code (another code of the same status means sign in again: 40101 refreshes, 40102 signs out); by default `code` where another refusal of an access token shares that status with another code, else `status`"
                ),
                Field(
                    "other_content_types", .string(oneOf: DialectDescription.OtherContentTypes.allCases.map(\.rawValue)),
                    "a body whose `Content-Type` is neither the endpoint's `encoding` nor its `also_accepts` (or, with a body, none): `read` (default) reads it as `encoding`, as a server that decodes any body does; `refuse` answers `unsupported_media_type` (a 415, as a framework that picks its parser by the type does)"
                ),
                Field(
                    "documents", .map(.any),
                    "fixed JSON answers to GET, by path, with `{base_url}` and `{issuer}` (an OpenID Connect discovery document an SDK reads first)"),
            ])
    }
}
