#!/usr/bin/env ruby
# frozen_string_literal: true

# authmock driver (stdio, protocol version 1) for the oauth2 gem (Debian's
# ruby-oauth2). Recipe: the gem README's usage (OAuth2::Client, the password
# strategy's get_token, AccessToken#request, OAuth2::Error on 400+), plus the
# glue the README leaves to the application and the gem's wrapper
# access_token_wrapper writes: when a call raises OAuth2::Error with status
# 401, replace the token with AccessToken#refresh! and send the call once more.
# A refresh the token endpoint refuses (400 or 401) means "sign in again"; a
# 5xx or 429 from it is that call's error.
require 'json'
require 'oauth2'
require 'oauth2/version'

# The application's client: one AccessToken shared by every thread, as an app
# keeps one signed-in session.
class RefreshingClient
  def initialize(hello)
    @base = hello['baseURL']
    @client = OAuth2::Client.new(hello['clientId'], hello['clientSecret'],
                                 site: @base, token_url: '/oauth/token', auth_scheme: :basic_auth)
  end

  def login(username, password)
    @token = @client.password.get_token(username, password)
    { outcome: 'ok' }
  rescue OAuth2::Error => e
    { outcome: 'http_error', status: e.response.status, message: e.response.body }
  end

  def request(method, path, headers, body)
    verb = method.downcase.to_sym
    options = { headers: headers, body: body }
    begin
      response = @token.request(verb, path, options)
    rescue OAuth2::Error => e
      return answer(e.response) unless e.response.status == 401

      begin
        @token = @token.refresh!
      rescue OAuth2::Error => refused
        # An RFC 6749 5.2 refusal (400, or 401 for the client) ends the session;
        # a token endpoint that is down or busy is this call's error.
        return { outcome: 'reauth_required', message: refused.message } if [400, 401].include?(refused.response.status)

        return answer(refused.response)
      end
      begin
        response = @token.request(verb, path, options)
      rescue OAuth2::Error => again
        response = again.response
      end
    end
    answer(response)
  end

  private

  def answer(response)
    { outcome: (200..299).cover?(response.status) ? 'ok' : 'http_error', status: response.status, body: response.body }
  end
end

# The protocol: JSON lines on stdin and stdout, each call on its own thread
# (the runner sends concurrent calls on purpose), each id answered once.
out = Mutex.new
# The runner gone (its end of the pipe closed): leave quietly, as at the end of stdin.
send = lambda do |message|
  out.synchronize { $stdout.write("#{JSON.generate(message)}\n"); $stdout.flush }
rescue Errno::EPIPE, IOError
  exit!(0)
end
client = nil
threads = []
$stdin.each_line do |line|
  message = JSON.parse(line)
  id = message['id']
  case message['op']
  when 'hello'
    client = RefreshingClient.new(message)
    send.call({ id: id, ok: true, driver: 'ruby-oauth2', version: "#{OAuth2::Version} (Debian)",
                profiles: ['oauth2'], capabilities: ['url'] })
  when 'login', 'request'
    threads << Thread.new(message) do |m|
      result = begin
        if m['op'] == 'login'
          client.login(m['username'], m['password'])
        else
          client.request(m['method'], m['url'] || m['path'], m['headers'] || {}, m['body'])
        end
      rescue StandardError => e # a library error the glue did not map: the app saw no answer
        warn e.full_message
        { outcome: 'transport_error', message: "#{e.class}: #{e.message}" }
      end
      send.call({ id: m['id'], ok: result[:outcome] == 'ok' }.merge(result))
    end
  when 'shutdown'
    threads.each { |thread| thread.join(10) }
    send.call({ id: id, ok: true })
    break
  else
    send.call({ id: id, ok: false, outcome: 'unsupported', message: "unknown op #{message['op']}" })
  end
end
