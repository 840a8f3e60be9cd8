"""suggestion"""
