#!/usr/bin/perl
# authmock driver (stdio, protocol version 1) for Net::OAuth2 (Debian's
# libnet-oauth2-perl), with the password grant: a
# Net::OAuth2::Profile::Password, `get_access_token(username => ...,
# password => ...)` for the sign-in, and the Net::OAuth2::AccessToken it
# returns, made with `auto_refresh => 1` (the module renews a token that
# expires within 15 s when it is used) and kept between processes as its
# POD shows: `session_freeze` after a call that `changed` it, `session_thaw`
# before the next. Perl applications run concurrent calls as processes (a
# preforking server), so each call here is a forked worker. The module
# never looks at a 401.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl-common";
use AuthmockDriver;
use JSON::PP;
use Net::OAuth2::AccessToken;
use Net::OAuth2::Profile::Password;

my $driver = AuthmockDriver->new;
my $store = $driver->dir . "/session";    # the application's session store
my $hello;

sub profile {
    return Net::OAuth2::Profile::Password->new(
        client_id => $hello->{clientId}, client_secret => $hello->{clientSecret}, site => $hello->{baseURL},
        access_token_path => '/oauth/token', refresh_token_path => '/oauth/token');
}

sub save_session {
    my ($token) = @_;
    open my $out, '>', "$store.$$" or die "save: $!";
    print $out encode_json($token->session_freeze);
    close $out;
    rename "$store.$$", $store or die "save: $!";
}

sub saved_token {
    open my $in, '<', $store or return undef;
    local $/;
    my $session = decode_json(scalar <$in>);
    return Net::OAuth2::AccessToken->session_thaw($session, profile => profile(), auto_refresh => 1);
}

sub work {
    my $message;
    ($message, $hello) = @_;
    if ($message->{op} eq 'login') {
        my $token = eval { profile()->get_access_token(username => $message->{username}, password => $message->{password}) }
          or return { outcome => 'http_error', message => "$@" };
        return { outcome => 'http_error', message => $token->error } if $token->error;
        save_session($token);
        return { outcome => 'ok' };
    }
    my $token = saved_token() or return { outcome => 'reauth_required', message => 'not signed in' };
    my $url = $message->{url} // "$hello->{baseURL}$message->{path}";
    my $response = eval { $token->request($message->{method}, $url, [%{ $message->{headers} // {} }], $message->{body}) };
    # A failed renewal croaks ("failed oauth call update token: received error: 400 ..."): the session is over.
    unless ($response) {
        my $error = "$@";
        return { outcome => 'reauth_required', message => $error } if $error =~ /failed oauth call update token: received error: 40[01]/;
        return { outcome => 'transport_error', message => $error };
    }
    save_session($token) if $token->changed;
    return AuthmockDriver::lwp_outcome($response);
}

$driver->serve('perl-net-oauth2', "$Net::OAuth2::AccessToken::VERSION (Debian)", \&work);
