/// Reading a backend's answers by the dialect's description: what a client
/// (the reference client) and a proxy in front of the real backend
/// (`authmock proxy`) both need, in one place.
extension DialectDescription {
    /// The value a placeholder stands for in one of the dialect's success
    /// answers: where sign-in's template, or the refresh's own, puts it in
    /// the body (`body`, parsed once by the caller), or in a header
    /// (`header` reads one by name, nil when absent).
    public func answerValue(_ placeholder: Placeholder, body: JSONValue?, header: (String) -> String?) -> JSONValue? {
        let templates = [tokens] + (refresh.tokens.map { [$0] } ?? [])
        for template in templates {
            if let path = template.body.path(to: placeholder), let value = body?.value(at: path) { return value }
        }
        for (name, template) in templates.flatMap(\.headers) {
            guard let value = header(name) else { continue }
            switch template {
            case .placeholder(placeholder, _): return .string(value)
            case .text(let pieces) where pieces.count == 2:
                if case .literal(let prefix) = pieces[0], case .placeholder(placeholder) = pieces[1], value.hasPrefix(prefix) {
                    return .string(String(value.dropFirst(prefix.count)))
                }
            default: continue
            }
        }
        return nil
    }

    /// A lifetime in seconds as answers write it (`expires_in`): a number,
    /// or a number written as a string.
    public func answerSeconds(_ placeholder: Placeholder, body: JSONValue?, header: (String) -> String?) -> Double? {
        answerValue(placeholder, body: body, header: header)?.numeric
    }

    /// The text a placeholder stands for in a success answer, when it is text.
    public func answerText(_ placeholder: Placeholder, body: JSONValue?, header: (String) -> String?) -> String? {
        if case .string(let value)? = answerValue(placeholder, body: body, header: header) { return value }
        return nil
    }

    /// The key of the dialect's error answer (`errors.answers`) that an
    /// answer with this status and body is: one of that status whose code
    /// stands at the error body's code path. nil for an answer that is none
    /// of them, or when the dialect's errors carry no code to tell them by.
    public func errorKey(status: Int, body: JSONValue?) -> String? { errorKeys(status: status, body: body).first }

    /// Every error answer an answer could be, by key: those of its status
    /// whose code stands where that answer puts it, the ones whose message
    /// the body says too first. Answers that share both
    /// (`token_not_valid` for access and refresh tokens alike) are told
    /// apart only by what was asked.
    public func errorKeys(status: Int, body: JSONValue?) -> [String] {
        guard let body else { return [] }
        var ranked: [(rank: Int, key: String)] = []
        for (key, answer) in errors.answers where answer.status == status {
            let template = answer.body ?? errors.body
            guard let path = template.path(to: .code) ?? codePath, body.value(at: path) == answer.code else { continue }
            var said = false
            if let path = template.path(to: .message), case .string(let text)? = body.value(at: path) { said = text.hasPrefix(answer.message) }
            ranked.append((said ? 0 : 1, key))
        }
        return ranked.sorted { ($0.rank, $0.key) < ($1.rank, $1.key) }.map(\.key)
    }
}
