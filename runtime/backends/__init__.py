"""Sandbox backends: inprocess, subprocess, docker, and the warm pool they share."""
